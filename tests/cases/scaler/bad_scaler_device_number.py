import torch
from torch.amp import GradScaler

scaler_a = torch.amp.GradScaler(1024.0)  # error: AMP016
scaler_b = torch.GradScaler(2**16, growth_interval=100)  # error: AMP016
scaler_c = GradScaler(65536.0, 2.0, 0.5)  # error: AMP016
