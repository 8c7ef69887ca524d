from .clipping import GlobalNormClipper
