package filestorage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// New gives a token file that the processes of one machine share (and the TypeScript and Python
// kits' processes too): the manager writes it 0600 in a 0700 directory, and refreshes under its
// lock, once per expiry however many processes ask.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	storage, err := filestorage.New(filepath.Join(dir, "my-cli", "tokens.json")) // "~/…" is the home directory
	if err != nil {
		panic(err) // INVALID_OPTIONS
	}
	manager, err := tokenmanager.New(tokenmanager.Config{
		BaseURL:     "https://acme.tenant.test",
		ClientID:    "my-cli",
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage))
	if err != nil {
		panic(err)
	}
	fmt.Println(manager.IsSignedIn(context.Background()))
	// Output: false <nil>
}
