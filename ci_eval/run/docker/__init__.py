"""The docker backend of the runner interface (ci_eval/run/runners.py): images built from a
task's Dockerfile, containers for checks, Harbor's verifier and agents placed in a container.

engine.py is the edge (the docker CLI, a container's lifetime); images.py builds and caches
images; containers.py is the pure part (the `docker run` argv with its limits); harbor.py reads
Harbor's reward; backend.py is the DockerRunner."""
