package dev.exactly.idempotency.internal;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 helpers. */
public final class Hashing {
    private static final HexFormat HEX = HexFormat.of();

    /** An unused digest, only ever cloned: cloning skips the provider lookup of {@code getInstance}. */
    private static final MessageDigest SHA_256 = newSha256();

    private Hashing() {}

    /** A fresh SHA-256 digest. */
    public static MessageDigest sha256() {
        try {
            return (MessageDigest) SHA_256.clone();
        } catch (CloneNotSupportedException notCloneable) {
            return newSha256();
        }
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
        byte[] bytes = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        field(digest, bytes);
    }

    public static void field(MessageDigest digest, byte[] bytes) {
        int n = bytes.length;
        digest.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
        digest.update(bytes);
    }
}
