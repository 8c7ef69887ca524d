from .callbacks import Callback, GradClipCallback, LossLogger
from .engine import Engine
