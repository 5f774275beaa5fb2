/**
 * The Redis idempotency store ({@link dev.exactly.idempotency.redis.RedisIdempotencyStore}) on Lettuce,
 * for standalone Redis and Redis Cluster: one Lua script per transition, server time for leases, the
 * retention as the key's TTL, and pub/sub change notification.
 */
@NullMarked
package dev.exactly.idempotency.redis;

import org.jspecify.annotations.NullMarked;
