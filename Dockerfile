# kubectl-slices for running `sync --watch` in a cluster (kubectl slices deploy).
# A static binary on distroless, run as the non-root user 65532:
#   docker build --build-arg VERSION=v1.2.3 -t REGISTRY/kubectl-slices:v1.2.3 .
# Nothing in this repository builds or pushes the image.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a source change reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.0.0-dev
ARG COMMIT=unknown
ARG DATE=unknown
# Static (no cgo), reproducible paths, the build tags and version as make
# build sets them.
RUN CGO_ENABLED=0 go build -trimpath -tags "$(grep -v '^#' hack/build-tags | paste -sd, -)" \
      -ldflags "-s -w -X github.com/kubectl-slices/kubectl-slices/pkg/cmd.Version=${VERSION} -X github.com/kubectl-slices/kubectl-slices/pkg/cmd.Commit=${COMMIT} -X github.com/kubectl-slices/kubectl-slices/pkg/cmd.Date=${DATE}" \
      -o /out/kubectl-slices ./cmd/kubectl-slices

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kubectl-slices /usr/local/bin/kubectl-slices
# distroless's nonroot user; the manifests of `kubectl slices deploy` run as it too.
USER 65532:65532
ENTRYPOINT ["kubectl-slices"]
