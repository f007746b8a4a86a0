# Every op_test's inner test has the same source, so hypothesis gives all of them one database key:
# a failure saved by one op_test is replayed by every other, and deleted by the first that passes it.
import tempfile
from common import *
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.internal.reflection import function_digest
db = DirectoryBasedExampleDatabase(tempfile.mkdtemp())
s = settings(database=db, max_examples=30, deadline=None)
test_wrong = op_test(lambda x: CubeWrong()(x), arg(), numpy=lambda a: a ** 3, settings=s)
test_ok = op_test(F.exp, arg(), numpy=np.exp, settings=s)
ka = function_digest(test_wrong.hypothesis.inner_test); kb = function_digest(test_ok.hypothesis.inner_test)
print("same database key:", ka == kb)
try:
    test_wrong()
except GradcheckError:
    print("test_wrong failed; saved entries under its key:", len(list(db.fetch(test_wrong._hypothesis_internal_database_key if hasattr(test_wrong, '_hypothesis_internal_database_key') else ka))))
def entries():
    return sum(len(list(db.fetch(k))) for k in db._key_cache) if hasattr(db, "_key_cache") else None
import os
def count_files():
    return sum(len(f) for _, _, f in os.walk(db.path))
print("files in db after test_wrong:", count_files())
test_ok()
print("files in db after test_ok (which replays test_wrong's failure, passes, and deletes it):", count_files())
# replay only (no generation): does test_wrong still fail from the database?
replay = settings(database=db, phases=[Phase.reuse], deadline=None)
again = op_test(lambda x: CubeWrong()(x), arg(), numpy=lambda a: a ** 3, settings=replay)
try:
    again(); print("test_wrong, replaying its saved failure only: PASSED (the failure was lost)")
except GradcheckError:
    print("test_wrong, replaying its saved failure only: failed (kept)")
