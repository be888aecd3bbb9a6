# %% one
print(1)
