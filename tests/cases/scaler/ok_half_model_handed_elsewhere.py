import torch
import torch.nn.functional as F


def train_student(student, teacher, loader):
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.no_grad():
            target = teacher(x.half())
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(student(x), target.float())
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    teacher = torch.nn.Linear(3, 3).cuda()
    teacher.half()
    student = torch.nn.Linear(3, 3).cuda()
    train_student(student, teacher, [torch.randn(4, 3, device="cuda")])
