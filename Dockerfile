# syntax=docker/dockerfile:1
# The mcpspec image: a static binary (CGO_ENABLED=0, built with GoReleaser's flags) on Alpine,
# run as a non-root user. Alpine rather than distroless: the Kubernetes example
# (examples/kubernetes) runs mcpspec through sh -c.
#
#   docker build -t ghcr.io/mcpspec/mcpspec:latest \
#     --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm ghcr.io/mcpspec/mcpspec:latest version --json

FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=
ENV CGO_ENABLED=0
RUN go build -trimpath \
      -ldflags "-s -w -X github.com/mcpspec/mcpspec/internal/cli.version=${VERSION} -X github.com/mcpspec/mcpspec/internal/cli.commit=${COMMIT}" \
      -o /out/mcpspec ./cmd/mcpspec

FROM alpine:3.22
RUN adduser -D -H -u 10001 -s /sbin/nologin mcpspec
COPY --from=build /out/mcpspec /usr/local/bin/mcpspec
USER 10001:10001
ENV HOME=/tmp
WORKDIR /tmp
ENTRYPOINT ["mcpspec"]
CMD ["--help"]
