from dataclasses import dataclass


@dataclass
class TrainSettings:
    classes: int = 7
    lr: float = 3e-4
    epochs: int = 40
    # fp16 weights halve the memory of the 1024 px crops
    half_weights: bool = True
