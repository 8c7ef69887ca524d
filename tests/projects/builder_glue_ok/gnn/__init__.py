from .fitting import Fitter
from .factory import create_network
