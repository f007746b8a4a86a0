# small CNN on random images
import minitx
import minitx.nn as nn
import minitx.nn.functional as F

minitx.manual_seed(0)
N, C, H, W, K = 128, 3, 16, 16, 5
X = minitx.randn(N, C, H, W)
y = minitx.randint(0, K, (N,))
X[minitx.arange(N), 0, :4, :4] += y.float().view(-1, 1, 1) # make it learnable

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(C, 16, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, stride=1, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(32, K)

    def forward(self, x):
        x = self.features(x)
        x = minitx.flatten(x, 1)
        return self.fc(self.drop(x))

net = Net()
opt = minitx.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for epoch in range(8):
    net.train()
    for i in range(0, N, 32):
        xb, yb = X[i:i + 32], y[i:i + 32]
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
net.eval()
with minitx.no_grad():
    out = net(X)
    acc = (out.argmax(1) == y).float().mean()
print("loss %.3f acc %.3f" % (loss.item(), acc))
bn = net.features[1]
print("bn running_mean", bn.running_mean.shape, "num_batches_tracked", int(bn.num_batches_tracked))
print("feature map", net.features[:4](X[:2]).shape)
x = minitx.randn(2, 3, 8, 8)
print(F.max_pool2d(x, 2).shape, F.avg_pool2d(x, kernel_size=2, stride=2).shape,
      F.adaptive_avg_pool2d(x, 1).shape, x.flatten(1).shape, x.mean((2, 3)).shape)
print(F.conv2d(x, minitx.randn(4, 3, 3, 3), padding=1).shape)
print(F.interpolate(x, scale_factor=2, mode="nearest").shape)
print(sum(p.numel() for p in net.parameters()))
print(x.permute(0, 2, 3, 1).shape, x.unsqueeze(0).shape, x[:, None].shape, x.squeeze().shape)
