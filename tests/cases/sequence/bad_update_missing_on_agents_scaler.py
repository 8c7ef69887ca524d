"""PPO minibatch loop stepping the agent's own GradScaler: the agent's forward passes return
values (queries of the agent), nothing updates the scaler, so the second minibatch's step
raises."""
import torch
import torch.nn.functional as F


def ppo_update(agent, rollout, epochs, minibatch, clip=0.2):
    n = rollout["obs"].size(0)
    for _ in range(epochs):
        perm = torch.randperm(n)
        for start in range(0, n, minibatch):
            mb = perm[start:start + minibatch]
            with torch.autocast("cuda", dtype=torch.float16):
                logp, entropy, value = agent.evaluate(rollout["obs"][mb], rollout["act"][mb])
                ratio = (logp - rollout["logp"][mb]).exp()
                adv = rollout["adv"][mb]
                pi_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
                loss = pi_loss + 0.5 * F.mse_loss(value, rollout["ret"][mb]) - 0.01 * entropy.mean()
            agent.optim.zero_grad(set_to_none=True)
            agent.scaler.scale(loss).backward()
            agent.scaler.step(agent.optim)  # error: AMP001
