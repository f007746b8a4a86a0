import sys; sys.path.insert(0,'/work/main/tests')
import test_docs_pages as t
for p in t.PAGES:
    print(p.name, t.problems_of(p))
