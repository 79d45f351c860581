package redisstorage

// The Redis keys of the manager's records, shared by every kit (spec/token-store/README.md): the
// scope part of a name is wrapped in a hash tag, so that the keys of one session (tokens, intent,
// lock) and so every script and pipeline on them stay in one slot of a Redis Cluster; a pending
// sign-in's tag is its client's. The same keys on a single server, so that a deployment moves
// between the two unchanged.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// namespace starts every name the manager gives a storage: tenant-integration:<origin>:<clientId>:<kind>.
const namespace = "tenant-integration:"

// Key is the Redis key of a storage or lock name (spec/token-store/README.md, "Names and keys"): for
// a scope's name, tenant-integration:<scope>:<kind> (kind one of tokens, intent, lock, and the
// pending of kits before issue 39; scope <origin>:<clientId>, or <origin>:<clientId>:<session> for a
// session), prefix + "tenant-integration:{<scope>}:<kind>"; for a pending sign-in's name,
// tenant-integration:<origin>:<clientId>:pending:<32 hex digits>,
// prefix + "tenant-integration:{<origin>:<clientId>}:pending:<32 hex digits>"; for any other name
// prefix + name. So a session's keys share one hash slot of a Redis Cluster, and different sessions
// spread over it.
//
//	Key("app:", "tenant-integration:https://acme.tenant.test:demo:42:tokens")
//	// "app:tenant-integration:{https://acme.tenant.test:demo:42}:tokens"
func Key(prefix, name string) string {
	rest, ok := strings.CutPrefix(name, namespace)
	if !ok {
		return prefix + name
	}
	if pendingName.MatchString(rest) {
		cut := len(rest) - len(":pending:") - 32
		return prefix + namespace + "{" + rest[:cut] + "}" + rest[cut:]
	}
	last := strings.LastIndexByte(rest, ':')
	if last <= 0 || !kinds[rest[last+1:]] {
		return prefix + name
	}
	return prefix + namespace + "{" + rest[:last] + "}" + rest[last:]
}

// kinds are the last parts of the manager's names of a scope.
var kinds = map[string]bool{"tokens": true, "pending": true, "intent": true, "lock": true}

// pendingName is a pending sign-in's name after the namespace: <origin>:<clientId>:pending:<key>.
var pendingName = regexp.MustCompile(`^.+:pending:[0-9a-f]{32}$`)

// checkPrefix refuses a prefix holding a brace: Redis Cluster hashes the first {…} of a key, so a
// brace in the prefix would take the place of the session's hash tag.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return invalid("WithPrefix", fmt.Sprintf("%q holds { or }: Redis Cluster would hash the prefix's braces instead of the session's hash tag, and the keys of one session could land on different nodes", prefix))
	}
	return nil
}

// checkClient refuses what cannot carry the storage: no client; a cluster client that reads from
// replicas; and a redis.Ring, which shards keys by a hash of its own over servers that share no
// pub/sub (no other kit finds its keys, and a release announced on one shard never reaches a waiter
// on another).
func checkClient(client redis.UniversalClient) error {
	switch c := client.(type) {
	case nil:
		return invalid("client", "give a go-redis client (redis.NewClient, redis.NewClusterClient, redis.NewFailoverClient)")
	case *redis.Client:
		if c == nil {
			return invalid("client", "the *redis.Client is nil")
		}
	case *redis.ClusterClient:
		if c == nil {
			return invalid("client", "the *redis.ClusterClient is nil")
		}
		if c.Options().ReadOnly {
			return invalid("client", "a redis.ClusterClient with ReadOnly, RouteByLatency or RouteRandomly sends reads to replicas, which may not yet hold a refresh token just rotated on the primary (presenting the old one ends the session): give one without them")
		}
	case *redis.Ring:
		return invalid("client", "a redis.Ring shards keys by its own hash over servers that share no pub/sub, which the other kits cannot follow: give a redis.Client (one server or failover) or a redis.ClusterClient")
	}
	return nil
}

// hint says in words why a Redis error happened, for what Redis Cluster answers; "" otherwise.
func hint(err error) string {
	var after *afterTries
	if errors.As(err, &after) {
		err = after.last
	}
	var redisErr redis.Error
	if !errors.As(err, &redisErr) {
		return ""
	}
	text := redisErr.Error()
	switch {
	case strings.HasPrefix(text, "CLUSTERDOWN"):
		return "the Redis Cluster is down, or no node serves the key's slot (see CLUSTER INFO and CLUSTER NODES)"
	case strings.HasPrefix(text, "MOVED "), strings.HasPrefix(text, "ASK "), strings.HasPrefix(text, "TRYAGAIN"):
		return "the key's slot is moving between cluster nodes (resharding) and the redirects ran out: retry once the slot has settled"
	case strings.HasPrefix(text, "WRONGTYPE"):
		return "the key holds a value of another Redis type than the strings the kit writes, so a value the kit did not write (another application's data?): nothing was changed; give the kit another prefix (WithPrefix), or remove that value if it is not needed"
	case strings.Contains(text, "cluster support disabled"):
		return "a redis.ClusterClient was given a Redis that is not a cluster: give a redis.Client"
	}
	return ""
}

// slotClient is the client that runs a pipeline on key's connection: on a cluster the key's
// primary, so that WAIT counts the acknowledgements of that connection's write.
func slotClient(ctx context.Context, client redis.UniversalClient, key string) (redis.UniversalClient, error) {
	if cluster, ok := client.(*redis.ClusterClient); ok {
		return cluster.MasterForKey(ctx, key)
	}
	return client, nil
}
