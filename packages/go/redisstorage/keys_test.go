package redisstorage_test

// The key scheme every kit shares (spec/token-store/README.md) and the options that would break it:
// no Redis needed, these run under -short.

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// hashTag is what Redis Cluster hashes of a key: the part between the first { and the first }
// after it when that part is not empty, else the whole key (the Redis Cluster specification).
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

func TestTheManagersNamesMapToKeysWhoseSessionPartIsAHashTag(t *testing.T) {
	for _, c := range []struct{ prefix, name, key string }{
		{"", "tenant-integration:https://acme.tenant.test:demo:tokens", "tenant-integration:{https://acme.tenant.test:demo}:tokens"},
		{"app:", "tenant-integration:https://acme.tenant.test:8443:demo:lock", "app:tenant-integration:{https://acme.tenant.test:8443:demo}:lock"},
		{"app:", "tenant-integration:http://127.0.0.1:4010:client:with:colons:intent", "app:tenant-integration:{http://127.0.0.1:4010:client:with:colons}:intent"},
		// names that are not the manager's are kept as they are
		{"app:", "tokens", "app:tokens"},
		{"", "tenant-integration:tokens", "tenant-integration:tokens"},
		{"", "other:https://a.test:demo:tokens", "other:https://a.test:demo:tokens"},
		{"", "tenant-integration:https://a.test:demo:other", "tenant-integration:https://a.test:demo:other"},
	} {
		if got := redisstorage.Key(c.prefix, c.name); got != c.key {
			t.Errorf("Key(%q, %q) = %q, want %q", c.prefix, c.name, got, c.key)
		}
	}
}

func TestTheKeysOfOneSessionShareAHashTagAndTwoSessionsDoNot(t *testing.T) {
	session := "tenant-integration:https://acme.tenant.test:demo:"
	tag := hashTag(redisstorage.Key("app:", session+"tokens"))
	for _, kind := range []string{"pending", "intent", "lock"} {
		if got := hashTag(redisstorage.Key("app:", session+kind)); got != tag {
			t.Errorf("%s hashes %q, tokens %q: one session would span slots", kind, got, tag)
		}
	}
	if got := hashTag(redisstorage.ReleasedChannel(redisstorage.Key("app:", session+"lock"))); got != tag {
		t.Errorf("the release channel hashes %q, the lock %q", got, tag)
	}
	if other := hashTag(redisstorage.Key("app:", "tenant-integration:https://acme.tenant.test:other:tokens")); other == tag {
		t.Error("two clients of one tenant share a hash tag: every session would sit in one slot")
	}
}

func TestAPrefixWithABraceIsRefusedBecauseItWouldTakeTheSessionsHashTag(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, prefix := range []string{"{app}:", "app{", "app}:"} {
		_, err := redisstorage.New(client, redisstorage.WithPrefix(prefix))
		if !errors.Is(err, tokenmanager.ErrInvalidOptions) || !strings.Contains(err.Error(), "WithPrefix") || !strings.Contains(err.Error(), "hash tag") {
			t.Errorf("New with prefix %q: %v", prefix, err)
		}
		if _, err := redisstorage.NewLock(client, redisstorage.WithPrefix(prefix)); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
			t.Errorf("NewLock with prefix %q: %v", prefix, err)
		}
	}
	if _, err := redisstorage.New(client, redisstorage.WithPrefix("billing-app:")); err != nil {
		t.Fatalf("a prefix without braces: %v", err)
	}
}

func TestARingAndReplicaReadsAreRefusedAndEveryOtherUniversalClientAccepted(t *testing.T) {
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1", "b": "127.0.0.1:2"}})
	defer ring.Close()
	_, err := redisstorage.New(ring)
	if !errors.Is(err, tokenmanager.ErrInvalidOptions) || !strings.Contains(err.Error(), "Ring") {
		t.Fatalf("a Ring: %v", err)
	}
	if _, err := redisstorage.NewLock(ring); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
		t.Fatalf("a Ring for the lock: %v", err)
	}
	for _, options := range []*redis.ClusterOptions{{ReadOnly: true}, {RouteByLatency: true}, {RouteRandomly: true}} {
		options.Addrs = []string{"127.0.0.1:1"}
		replicaReads := redis.NewClusterClient(options)
		defer replicaReads.Close()
		if _, err := redisstorage.New(replicaReads); !errors.Is(err, tokenmanager.ErrInvalidOptions) || !strings.Contains(err.Error(), "replicas") {
			t.Errorf("a cluster client reading from replicas: %v", err)
		}
	}
	var missing *redis.Client
	if _, err := redisstorage.New(missing); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
		t.Fatalf("a nil *redis.Client: %v", err)
	}
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cluster.Close()
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}})
	defer failover.Close()
	universal := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:1", "127.0.0.1:2"}})
	defer universal.Close()
	for _, client := range []redis.UniversalClient{cluster, failover, universal} {
		if _, err := redisstorage.New(client); err != nil {
			t.Errorf("%T: %v", client, err)
		}
	}
}

// crc16 is Redis Cluster's key hash (CRC16-CCITT, XMODEM): a key's slot is crc16(hashTag) % 16384.
func crc16(text string) int {
	crc := 0
	for i := 0; i < len(text); i++ {
		crc ^= int(text[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = (crc << 1) ^ 0x1021
			} else {
				crc <<= 1
			}
			crc &= 0xffff
		}
	}
	return crc
}

func slot(key string) int { return crc16(hashTag(key)) % 16384 }

// Every kit maps the names to the same keys, slots and wake channels: the shared vectors.
func TestTheKeysOfSessionsAndPendingSignInsAreTheSharedVectors(t *testing.T) {
	vectors := tokenstoreschema.ReadVectors(t)
	for _, v := range vectors.Scopes {
		for kind, name := range v.Names {
			key := redisstorage.Key(v.Prefix, name)
			if key != v.RedisKeys[kind] || slot(key) != v.Slot {
				t.Errorf("%s %s: %s in slot %d, want %s in %d", v.Scope, kind, key, slot(key), v.RedisKeys[kind], v.Slot)
			}
		}
		if channel := redisstorage.Key(v.Prefix, v.Names["lock"]) + ":released"; channel != v.Channel {
			t.Errorf("%s: the wake channel %s, want %s", v.Scope, channel, v.Channel)
		}
	}
	for _, v := range vectors.Pending {
		if key := redisstorage.Key(v.Prefix, v.Name); key != v.RedisKey || slot(key) != v.Slot {
			t.Errorf("pending %s: %s in slot %d, want %s in %d", v.Key, key, slot(key), v.RedisKey, v.Slot)
		}
	}
}
