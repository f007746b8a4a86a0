import tempfile, os
from common import *
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.internal.reflection import function_digest
db = DirectoryBasedExampleDatabase(tempfile.mkdtemp())
s = settings(database=db, max_examples=30, deadline=None)
test_wrong = op_test(lambda x: CubeWrong()(x), arg(), numpy=lambda a: a ** 3, settings=s)
test_ok = op_test(F.exp, arg(), numpy=np.exp, settings=s)
key = function_digest(test_wrong.hypothesis.inner_test)
print("same key:", key == function_digest(test_ok.hypothesis.inner_test))
try: test_wrong()
except GradcheckError: pass
print("primary entries after test_wrong fails:", len(list(db.fetch(key))))
seen = []
orig = CubeWrong.forward
test_ok2 = op_test(lambda x: seen.append(x.numpy().copy()) or F.exp(x), arg(), numpy=np.exp,
                   settings=settings(database=db, max_examples=1, deadline=None, phases=[Phase.reuse]))
test_ok2()
print("test_ok (reuse phase only) ran on the replayed examples:", [v.tolist() for v in seen[:2]])
print("primary entries after test_ok:", len(list(db.fetch(key))), "secondary:", len(list(db.fetch(key + b".secondary"))))
