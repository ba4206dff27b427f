"""epochrt: jobs run in epochs with checkpoints, under Caffe2's names.

A job's groups run on nodes (LocalSession, DistributedSession), a
JobRunner drives its epochs, and a checkpoint manager
(MultiNodeCheckpointManager, CheckpointManager) saves every node's
workspace after each one, so that a job that is killed resumes from its
last committed epoch with the result of an uninterrupted run.

The classes live in the native module, epochrt._epochrt; this package
adds Caffe2's call forms that are plain Python (epochrt/_caffe2.py).
"""

from epochrt._epochrt import *  # noqa: F401,F403
from epochrt._epochrt import __version__  # noqa: F401
from epochrt._caffe2 import (  # noqa: F401
    CheckpointManager,
    MultiNodeCheckpointManager,
    UploadTaskGroupBuilder,
    get_ckpt_filename,
)
