from .events import EventBus, GradMonitor, Hook
from .fitter import Fitter
