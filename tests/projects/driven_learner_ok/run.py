from rl.learner import Learner


def main(model, queue, total_updates):
    learner = Learner(model)
    while learner.num_updates < total_updates:
        batch = queue.get()
        learner.update(batch)
