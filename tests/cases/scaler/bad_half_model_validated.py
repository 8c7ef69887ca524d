import torch


def fit(loader, val_loader, epochs):
    # the model is validated between epochs (`model.eval()` / `model.train()`), but it is the
    # module the scaler's optimizer trains: its fp16 parameters make `unscale_` raise
    model = torch.nn.Linear(4, 4).cuda().half()  # error: AMP014
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        model.train()
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        model.eval()
        with torch.no_grad():
            for x, y in val_loader:
                print(torch.nn.functional.mse_loss(model(x), y).item())


def fit_validated_at_the_end(loader):
    # never switched back with `.train()`, but held by the optimizer the scaler steps
    model = torch.nn.Linear(4, 4).cuda()
    model.half()  # error: AMP014
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    model.eval()
