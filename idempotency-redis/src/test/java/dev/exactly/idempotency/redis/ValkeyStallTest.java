package dev.exactly.idempotency.redis;

import java.nio.file.Path;

/**
 * The stalls of {@link RedisStallTest} on Valkey 8.1, where a completion is {@code SET ... IFEQ} and the
 * waiter marker's {@code EXISTS}: frozen before the answer, it times out on the client and is applied by the
 * server when it runs again, as the script is.
 */
class ValkeyStallTest extends RedisStallTest {
    @Override
    Path serverBinary(Path workDir) {
        return TestValkey.binary();
    }
}
