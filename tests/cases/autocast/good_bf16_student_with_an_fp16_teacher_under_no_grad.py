"""Distillation: the frozen teacher runs in fp16 autocast under ``no_grad`` and the student in
bf16 autocast with a plain backward and no GradScaler. No gradient flows back through the
teacher's fp16 logits, so the backward is no fp16 backward (no AMP106)."""
import torch
import torch.nn.functional as F


def train(student, teacher, optimizer, loader, T=2.0):
    teacher = teacher.cuda().half().eval()
    for x, y in loader:
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            t_logits = teacher(x)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_logits = student(x)
            loss = F.cross_entropy(s_logits, y) + F.kl_div(
                F.log_softmax(s_logits / T, -1), F.softmax(t_logits.float() / T, -1), reduction="batchmean")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
