"""The workspaces the app is installed in, in Redis: installations and their sealed tokens, OAuth states, members."""
