module github.com/tenant-integration/sdk/apps/example-go-server

go 1.26.0

require (
	github.com/redis/go-redis/v9 v9.23.0
	github.com/tenant-integration/sdk/packages/go v0.0.0
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oapi-codegen/runtime v1.9.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/tenant-integration/sdk/packages/go => ../../packages/go
