"""Caffe2's call forms over epochrt's native checkpoint managers.

Caffe2's managers build task groups that a session runs:

    session.run(manager.init(nodes))
    session.run(manager.load(epoch))

epochrt's do the work when called, given the session where they need one:

    manager.init(session, nodes)
    manager.load(epoch)

Both forms work. `init` without a session returns a step that
`session.run` carries out; `load`, `save` and `load_blobs_locally` do their
work at once and return a step that `session.run` accepts as done.

What differs from Caffe2, and why:

- `db_type`: epochrt writes one format, its own LevelDB databases with a
  digest per blob, whatever Caffe2 db type is named ("minidb", "leveldb",
  "lmdb", "rocksdb" are accepted); another name is refused.
- `metadata_handler`: epochrt keeps the committed epochs in
  `<db_prefix>/epochrt.metadata`, written atomically and durably, so a
  Python handler is refused rather than ignored.
- `path_type` is accepted as a db type and changes nothing.
"""

import os

from epochrt import _epochrt as _native

#: The db types of Caffe2 that name epochrt's one format.
DB_TYPES = ("leveldb", "minidb", "lmdb", "rocksdb")


def _bad_input(text):
    error = _native.BadInput(text)
    error.code = "invalid_argument"
    return error


def get_ckpt_filename(node_name, epoch):
    """The file name of `node_name`'s checkpoint of `epoch` (Caffe2's):
    "<node>.<epoch>"."""
    return "%s.%d" % (node_name, epoch)


def _check_db_type(db_type, what):
    if db_type is not None and db_type not in DB_TYPES:
        raise _bad_input(
            "%s %r: epochrt stores checkpoints in its own format; give one "
            "of %s (all mean that format) or leave it out"
            % (what, db_type, ", ".join(DB_TYPES)))


def _node_names(nodes, what="nodes"):
    """`nodes` as a list of names: a string is one name given where a
    list belongs (Caffe2 names nodes by str(node), so Node-like objects
    pass), None and repeats are refused."""
    if isinstance(nodes, (str, bytes)):
        raise _bad_input("%s: expected a list of node names, got the string "
                         "%r" % (what, nodes))
    names = []
    for node in nodes:
        if node is None:
            raise _bad_input("%s: a node is None" % what)
        name = str(node)
        if name in names:
            raise _bad_input("%s: node '%s' is given twice" % (what, name))
        names.append(name)
    return names


def _blob_names(blob_names):
    if isinstance(blob_names, (str, bytes)):
        raise _bad_input("blob_names: expected a list of blob names, got the "
                         "string %r" % (blob_names,))
    return list(blob_names)


def _check_no_metadata_handler(handler):
    if handler is not None:
        raise _bad_input(
            "metadata_handler: epochrt keeps the committed epochs in "
            "<db_prefix>/epochrt.metadata, written atomically and durably; "
            "a Caffe2 metadata handler is not supported: leave it out")


class CheckpointStep(object):
    """What a checkpoint manager's call returns in Caffe2's form, for
    `session.run`: a step still to do (`init` without a session), which
    the session's `run` carries out, or one done already (`load`, `save`),
    which it accepts and skips."""

    def __init__(self, name, action=None):
        self.name = name
        self._action = action

    @property
    def done(self):
        return self._action is None

    def _run_on(self, session):
        if self._action is None:
            return None
        result = self._action(session)
        self._action = None
        return result

    def __repr__(self):
        return "<epochrt.CheckpointStep %s%s>" % (
            self.name, ", done" if self.done else "")


def _caffe2_init_args(nodes=None, retrieve_from_epoch=None, path_prefix=None,
                      path_type=None):
    return nodes, retrieve_from_epoch, path_prefix, path_type


class _Caffe2Forms(object):
    """The calls whose Caffe2 form differs, shared by both managers."""

    def _default_nodes(self):
        return None

    def init(self, *args, **kwargs):
        """Binds the manager to `nodes` and lists the blobs their
        checkpoints hold: those of their workspaces now, or of the
        checkpoints of `retrieve_from_epoch`.

        epochrt's form, `init(session, nodes, retrieve_from_epoch=None,
        path_prefix="")`, does it now. Caffe2's, `init(nodes,
        retrieve_from_epoch=None, path_prefix=None, path_type=None)`,
        returns a CheckpointStep that `session.run` carries out."""
        session = kwargs.pop("session", None)
        if session is None and args and isinstance(args[0], _native.Session):
            session, args = args[0], args[1:]
        nodes, epoch, path_prefix, path_type = _caffe2_init_args(
            *args, **kwargs)
        _check_db_type(path_type, "path_type")
        if nodes is None:
            nodes = self._default_nodes()
        if nodes is None:
            raise _bad_input("init: give the nodes to checkpoint")
        nodes = _node_names(nodes)
        path_prefix = path_prefix or ""

        def bind(sess):
            _native.MultiNodeCheckpointManager.init(
                self, sess, nodes, epoch, path_prefix)

        if session is not None:
            return bind(session)
        return CheckpointStep("init", bind)

    def load(self, epoch, path_prefix=None, path_type=None):
        """Loads every node's checkpoint of `epoch`, every digest checked;
        returns a done CheckpointStep (Caffe2's session.run(load(...)))."""
        _check_db_type(path_type, "path_type")
        _native.MultiNodeCheckpointManager.load(self, epoch, path_prefix or "")
        return CheckpointStep("load")

    def save(self, epoch):
        """Saves every node's checkpoint of `epoch` (write_checkpoint_metadata
        commits it); returns a done CheckpointStep."""
        _native.MultiNodeCheckpointManager.save(self, epoch)
        return CheckpointStep("save")

    def set_params(self, nodes, path_prefix=None, path_type=None):
        """Sets the nodes and the path prefix, as JobRunner.train does
        first; refuses a directory another job holds."""
        _check_db_type(path_type, "path_type")
        _native.MultiNodeCheckpointManager.set_params(
            self, _node_names(nodes), path_prefix)

    def load_blobs_locally(self, nodes, blob_names, epoch, session):
        """Loads only `blob_names` from every node's checkpoint of `epoch`
        into that node, binding the manager to `nodes` first when no init
        did (Caffe2's): True, or False with nothing loaded when a
        checkpoint of that epoch does not exist."""
        return _native.MultiNodeCheckpointManager.load_blobs_locally(
            self, _node_names(nodes), _blob_names(blob_names), epoch, session)


class MultiNodeCheckpointManager(_Caffe2Forms,
                                 _native.MultiNodeCheckpointManager):
    __doc__ = _native.MultiNodeCheckpointManager.__doc__ + """

Caffe2's signature works too: MultiNodeCheckpointManager(db_prefix,
db_type, metadata_handler=None), with db_type one of DB_TYPES (all mean
epochrt's format) and no metadata handler (see epochrt._caffe2)."""

    def __init__(self, db_prefix, db_type=None, metadata_handler=None,
                 **options):
        _check_db_type(db_type, "db_type")
        _check_no_metadata_handler(metadata_handler)
        _native.MultiNodeCheckpointManager.__init__(
            self, os.fspath(db_prefix), **options)
        self.db_type = db_type or "leveldb"


class CheckpointManager(_Caffe2Forms, _native._CheckpointManager):
    """The checkpoints of one node (Caffe2's CheckpointManager), under
    `db_prefix` as `<db_prefix>/<node_name>.<epoch>`: a
    MultiNodeCheckpointManager that refuses any other node, in `init`,
    `load_blobs_locally` and a JobRunner whose job checkpoints other
    nodes. Options as MultiNodeCheckpointManager's (timeout, full_every,
    keep_last); db_type and metadata_handler as there."""

    def __init__(self, db_prefix, node_name, db_type=None,
                 metadata_handler=None, **options):
        _check_db_type(db_type, "db_type")
        _check_no_metadata_handler(metadata_handler)
        if node_name is None:
            raise _bad_input("node_name: a CheckpointManager needs its node")
        _native._CheckpointManager.__init__(self, os.fspath(db_prefix),
                                            str(node_name), **options)
        self.db_type = db_type or "leveldb"

    def _default_nodes(self):
        return [self.node_name]

    def blob_list(self, node=None):
        """The blobs the last init (or train) listed for the node."""
        return _native.MultiNodeCheckpointManager.blob_list(
            self, self.node_name if node is None else str(node))

    def load_blobs_from_checkpoint(self, blob_names, epoch, session=None):
        """Loads only `blob_names` from the node's checkpoint of `epoch`,
        skipping names it lacks: True, or False when it does not exist.
        Without a session (Caffe2's form), returns a CheckpointStep whose
        session.run does it and returns that answer."""
        names = _blob_names(blob_names)

        def load(sess):
            return self._load_blobs_from_checkpoint(names, epoch, sess)

        if session is not None:
            return load(session)
        return CheckpointStep("load_blobs_from_checkpoint", load)


class UploadTaskGroupBuilder(object):
    """Builds the task group that uploads the checkpoints of an epoch once
    the job's epochs are done (Caffe2's UploadTaskGroupBuilder). Give a
    subclass to JobRunner(..., upload_task_group_builder=...): its
    `build(epoch, checkpoint_manager)` returns a TaskGroup (or None, for
    nothing to upload), which the runner runs before the download group.
    It may ask the manager for names only (get_ckpt_db_name, db_prefix,
    nodes; blob_list is filled once train returns); the group it returns
    does the work, on the nodes,
    and must be safe to run twice (after a recovery it runs again)."""

    def build(self, epoch, checkpoint_manager):
        raise NotImplementedError()
