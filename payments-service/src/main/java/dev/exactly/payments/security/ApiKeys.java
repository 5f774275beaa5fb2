package dev.exactly.payments.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The API keys the service accepts: each tenant's, and the operator's. Keys are held as SHA-256 digests
 * and compared in constant time against every entry, so neither memory nor timing gives one away.
 */
public final class ApiKeys {
    /** Tenant ids: they become part of ledger account codes and scopes. */
    public static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9_-]{0,39}");

    private static final String BEARER = "bearer ";
    private static final MessageDigest SHA_256 = sha256Digest();

    private record Entry(byte[] digest, Caller caller) {}

    private final List<Entry> entries;

    /**
     * @param tenantKeys  API key to tenant id
     * @param operatorKey the operator's key, or empty for none
     */
    public ApiKeys(Map<String, String> tenantKeys, String operatorKey) {
        List<Entry> list = new ArrayList<>();
        tenantKeys.forEach((key, tenant) -> {
            if (key.isBlank() || !TENANT.matcher(tenant).matches()) {
                throw new IllegalArgumentException("API keys must not be blank and tenants must match "
                        + TENANT.pattern() + " (got tenant '" + tenant + "')");
            }
            list.add(new Entry(sha256(key.strip()), Caller.tenant(tenant)));
        });
        if (!operatorKey.isBlank()) {
            if (tenantKeys.containsKey(operatorKey)) {
                throw new IllegalArgumentException("the operator key must differ from every tenant key");
            }
            list.add(new Entry(sha256(operatorKey.strip()), Caller.operatorKey()));
        }
        this.entries = List.copyOf(list);
    }

    /** The caller an {@code Authorization: Bearer <key>} header value names, if the key is known. */
    public Optional<Caller> fromAuthorization(String header) {
        String value = header.strip();
        if (value.length() <= BEARER.length() || !value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Optional.empty();
        }
        byte[] presented = sha256(value.substring(BEARER.length()).strip());
        Caller match = null;
        for (Entry entry : entries) {
            if (MessageDigest.isEqual(presented, entry.digest()) && match == null) {
                match = entry.caller();
            }
        }
        return Optional.ofNullable(match);
    }

    private static byte[] sha256(String key) {
        try {
            // a copy of a digest made once: cheaper than looking the algorithm up in the providers per request
            return ((MessageDigest) SHA_256.clone()).digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the SHA-256 digest cannot be copied", e);
        }
    }

    private static MessageDigest sha256Digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
