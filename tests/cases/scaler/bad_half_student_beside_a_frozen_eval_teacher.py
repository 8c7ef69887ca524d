"""The frozen teacher is set up with ``.half().eval()`` (no evaluation phase begins there); the
student is made fp16 under ``--fp16`` while the GradScaler that steps it is enabled by the same
flag: the first ``unscale_`` raises."""
import torch


def main(args, build_teacher, build_student, loader):
    teacher = build_teacher().cuda().half().eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = build_student().cuda()
    if args.fp16:
        student = student.half()  # error: AMP014
    optimizer = torch.optim.SGD(student.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)
    for x, y in loader:
        with torch.no_grad():
            t_out = teacher(x.half())
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
            loss = student.loss(x, y, t_out)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(student.parameters(), 10.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
