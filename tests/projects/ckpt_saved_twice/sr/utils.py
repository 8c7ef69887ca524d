import os
import shutil

import torch


def save_checkpoint(
        state_dict: dict,
        file_name: str,
        samples_dir: str,
        results_dir: str,
        is_best: bool = False,
) -> None:
    checkpoint_path = os.path.join(samples_dir, file_name)
    torch.save(state_dict, checkpoint_path)
    if is_best:
        shutil.copyfile(checkpoint_path, os.path.join(results_dir, "best.pth.tar"))


def is_main_process() -> bool:
    return os.environ.get("RANK", "0") == "0"


def save_on_master(*args, **kwargs):
    if is_main_process():
        torch.save(*args, **kwargs)
