package dev.exactly.idempotency.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * {@code Authorization: Bearer <key>} to tenant. Only SHA-256 digests of the keys are held; a presented
 * key is hashed and compared with every entry using {@link MessageDigest#isEqual} (constant time for
 * equal lengths, and every entry is visited), so neither timing nor a heap dump reveals a key.
 */
final class ApiKeyTenantResolver implements TenantResolver {
    private static final String BEARER = "bearer ";

    private record Entry(byte[] digest, String tenant) {}

    private final List<Entry> entries;

    ApiKeyTenantResolver(Map<String, String> keyToTenant) {
        List<Entry> list = new ArrayList<>(keyToTenant.size());
        keyToTenant.forEach((key, tenant) -> {
            if (key == null || key.isBlank() || tenant == null || tenant.isBlank()) {
                throw new IllegalArgumentException("API keys and tenants must not be blank");
            }
            list.add(new Entry(sha256(key), tenant));
        });
        this.entries = List.copyOf(list);
    }

    @Override
    public Optional<String> resolve(HttpServletRequest request) {
        return resolve(Collections.list(request.getHeaders("Authorization")));
    }

    /** The tenant of the {@code Authorization} header values a request carried (exactly one, a known bearer key). */
    Optional<String> resolve(List<String> headers) {
        if (headers.size() != 1) {
            return Optional.empty();
        }
        String header = headers.getFirst().strip();
        if (header.length() <= BEARER.length()
                || !header.substring(0, BEARER.length())
                        .toLowerCase(Locale.ROOT)
                        .equals(BEARER)) {
            return Optional.empty();
        }
        byte[] presented = sha256(header.substring(BEARER.length()).strip());
        @Nullable String match = null;
        for (Entry entry : entries) {
            boolean equal = MessageDigest.isEqual(presented, entry.digest());
            if (equal && match == null) {
                match = entry.tenant();
            }
        }
        return Optional.ofNullable(match);
    }

    private static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    @Override
    public String toString() {
        return "ApiKeyTenantResolver[" + entries.size() + " keys]";
    }
}
