#!/bin/sh
# Entrypoint of router/Dockerfile. SageMaker starts the container as `docker run IMAGE serve`; the supervisor
# accepts and ignores that `serve`. exec: the supervisor becomes PID 1 and receives SageMaker's SIGTERM itself.
exec /usr/local/bin/node /opt/prefix-router/dist/bin/prefix-router.js container "$@"
