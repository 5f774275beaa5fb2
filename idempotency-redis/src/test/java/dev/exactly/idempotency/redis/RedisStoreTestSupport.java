package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/** Values the Redis store tests share. */
final class RedisStoreTestSupport {
    private static final SecureRandom RANDOM = new SecureRandom();

    private RedisStoreTestSupport() {}

    static ScopeKey randomKey() {
        return new ScopeKey(randomHex(32));
    }

    static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    /** A key prefix no other test run shares. */
    static String uniquePrefix() {
        return "exactly:test:" + randomHex(4) + ":";
    }

    static Fingerprint fingerprint(String value) {
        return new Fingerprint("test-sha256", value);
    }

    /** A body that is not UTF-8 (NUL, 0xFF, a broken two-byte sequence, a lone continuation byte, CR LF). */
    static byte[] binaryBody() {
        return new byte[] {0x00, (byte) 0xff, (byte) 0xc3, 0x28, (byte) 0x80, 0x0d, 0x0a, 0x7b, (byte) 0xfe, 0x00};
    }

    static StoredResponse binaryResponse() {
        return new StoredResponse(
                201,
                Map.of(
                        "content-type", List.of("application/octet-stream"),
                        "x-multi", List.of("one", "two, three", ""),
                        "x-unicode", List.of("caf\u00e9 \u20ac \ud83d\udcb3")),
                binaryBody());
    }
}
