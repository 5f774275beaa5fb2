package dev.exactly.idempotency.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** SHA-256 helpers. */
public final class Hashing {
    private static final HexFormat HEX = HexFormat.of();

    /** An unused digest, only ever cloned: cloning skips the provider lookup of {@code getInstance}. */
    private static final MessageDigest SHA_256 = newSha256();
    /**
     * Digests of finished hashes, for the next one: every guarded request hashes its scope and its
     * fingerprint, and reusing a digest (reset by {@code digest()}) saves cloning one each time. A slot is
     * taken with an atomic swap, so a digest is only ever used by one thread at a time.
     */
    private static final AtomicReferenceArray<MessageDigest> IDLE = new AtomicReferenceArray<>(16);

    private Hashing() {}

    /** A fresh SHA-256 digest. */
    public static MessageDigest sha256() {
        try {
            return (MessageDigest) SHA_256.clone();
        } catch (CloneNotSupportedException notCloneable) {
            return newSha256();
        }
    }

    /** The SHA-256 of {@code bytes}, with a digest reused from an earlier hash when one is idle. */
    private static byte[] digest(byte[] bytes) {
        int slot = (int) Thread.currentThread().threadId() & (IDLE.length() - 1);
        MessageDigest digest = IDLE.getAndSet(slot, null);
        if (digest == null) {
            digest = sha256();
        }
        byte[] hash = digest.digest(bytes); // resets the digest
        IDLE.set(slot, digest);
        return hash;
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK ships SHA-256", e);
        }
    }

    public static String hex(byte[] bytes) {
        return HEX.formatHex(bytes);
    }

    /** Feeds a length-prefixed UTF-8 field, so that ("ab","c") and ("a","bc") never collide. */
    public static void field(MessageDigest digest, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        field(digest, bytes);
    }

    public static void field(MessageDigest digest, byte[] bytes) {
        int n = bytes.length;
        digest.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
        digest.update(bytes);
    }

    /**
     * The hex SHA-256 of length-prefixed fields, the same digest as {@link #field} fed field by field, but
     * laid out in one buffer and hashed in one update: the digest is called once, not twice per field.
     */
    public static String sha256Hex(String... fields) {
        byte[][] encoded = new byte[fields.length][];
        int size = 0;
        for (int i = 0; i < fields.length; i++) {
            encoded[i] = fields[i].getBytes(StandardCharsets.UTF_8);
            size += 4 + encoded[i].length;
        }
        byte[] buffer = new byte[size];
        int at = 0;
        for (byte[] field : encoded) {
            at = put(buffer, at, field);
        }
        return hex(digest(buffer));
    }

    /**
     * The hex SHA-256 of length-prefixed fields: two strings, then bytes (a fingerprint's method, route,
     * body). A body above 64 KiB is fed as it is rather than copied.
     */
    public static String sha256Hex(String first, String second, byte[] third) {
        if (third.length > 65_536) {
            MessageDigest digest = sha256();
            field(digest, first);
            field(digest, second);
            field(digest, third);
            return hex(digest.digest());
        }
        byte[] a = first.getBytes(StandardCharsets.UTF_8);
        byte[] b = second.getBytes(StandardCharsets.UTF_8);
        byte[] buffer = new byte[12 + a.length + b.length + third.length];
        put(buffer, put(buffer, put(buffer, 0, a), b), third);
        return hex(digest(buffer));
    }

    private static int put(byte[] buffer, int at, byte[] field) {
        int n = field.length;
        buffer[at] = (byte) (n >>> 24);
        buffer[at + 1] = (byte) (n >>> 16);
        buffer[at + 2] = (byte) (n >>> 8);
        buffer[at + 3] = (byte) n;
        System.arraycopy(field, 0, buffer, at + 4, n);
        return at + 4 + n;
    }
}
