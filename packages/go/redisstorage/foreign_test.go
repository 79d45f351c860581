package redisstorage_test

// Values the kit did not write, under the keys of a session (decisions D2 and D3 of the kits): a
// value of another Redis type is named, kept and fails the call; a string that is no record of the
// kit's is named; messages name the Redis key a user finds with redis-cli.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func TestAHashUnderTheIntentKeyFailsTheRefreshNamingTheKeyAndIsKept(t *testing.T) {
	s := startRedis(t)
	sandbox := tenanttest.Start(t)
	client := s.client(t)
	ctx := context.Background()
	storage, _ := redisstorage.New(s.client(t), redisstorage.WithPrefix("billing:"))
	m := manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now))
	signIn(t, m)
	intentKey := "billing:tenant-integration:{" + m.BaseURL() + ":" + tenanttest.DefaultClientID + "}:intent"
	client.HSet(ctx, intentKey, "owner", "another application") // not the kit's
	since, _ := sandbox.LastSeq()
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}

	_, err := m.AccessToken(ctx)
	if !errors.Is(err, tokenmanager.ErrStorageFailed) || !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeCommandFailed}) {
		t.Fatalf("a refresh with a hash under the intent key: %v", err)
	}
	if !strings.Contains(err.Error(), intentKey) || !strings.Contains(err.Error(), "a value the kit did not write") {
		t.Fatalf("the error names the Redis key and says the kit did not write its value: %v", err)
	}
	if n, _ := sandbox.RefreshCount(since); n != 0 {
		t.Fatalf("%d refreshes were sent with the intent unknown", n)
	}
	if owner := client.HGet(ctx, intentKey, "owner").Val(); owner != "another application" {
		t.Fatalf("the hash was overwritten or deleted: %q", owner)
	}
}

func TestAStringUnderTheIntentKeyThatIsNoIntentReadsAsAbsentWithAWarningNamingTheKey(t *testing.T) {
	s := startRedis(t)
	sandbox := tenanttest.Start(t)
	client := s.client(t)
	ctx := context.Background()
	storage, _ := redisstorage.New(s.client(t), redisstorage.WithPrefix("billing:"))
	var logs bytes.Buffer
	m := manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now),
		tokenmanager.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	signIn(t, m)
	intentKey := "billing:tenant-integration:{" + m.BaseURL() + ":" + tenanttest.DefaultClientID + "}:intent"
	client.Set(ctx, intentKey, "left by another application", 0)
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}

	if _, err := m.AccessToken(ctx); err != nil {
		t.Fatalf("a string that is no intent reads as none: %v", err)
	}
	if n := strings.Count(logs.String(), "is not a refresh intent record"); n != 1 || !strings.Contains(logs.String(), intentKey) {
		t.Fatalf("one warning naming %s, got:\n%s", intentKey, logs.String())
	}
	if value := client.Get(ctx, intentKey).Val(); value == "left by another application" {
		t.Fatal("the refresh's intent did not replace the value")
	}
}

func TestAValueThatIsNoTokenRecordIsNamedByItsRedisKey(t *testing.T) {
	s := startRedis(t)
	client := s.client(t)
	ctx := context.Background()
	storage, _ := redisstorage.New(s.client(t), redisstorage.WithPrefix("billing:"))
	m := manager(t, "https://acme.tenant.test", storage)
	tokensKey := "billing:tenant-integration:{https://acme.tenant.test:" + tenanttest.DefaultClientID + "}:tokens"
	client.Set(ctx, tokensKey, "not a token record", 0)

	_, err := m.AccessToken(ctx)
	if !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeNotSignedIn}) || !strings.Contains(err.Error(), "the value under "+tokensKey+" is not a token record") {
		t.Fatalf("the message names the Redis key (%s): %v", tokensKey, err)
	}
	if storage.Where("tenant-integration:https://acme.tenant.test:"+tenanttest.DefaultClientID+":tokens") != tokensKey {
		t.Fatal("Where is not the Redis key")
	}
}
