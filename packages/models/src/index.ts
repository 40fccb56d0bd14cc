// Models as PyTorch users have them, built from graph nodes and loaded by their own state_dict names.
export {};
