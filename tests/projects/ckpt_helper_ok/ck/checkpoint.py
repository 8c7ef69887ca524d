import torch


def save_checkpoint(model, optimizer, scaler, epoch, path):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
                "epoch": epoch}, path)
