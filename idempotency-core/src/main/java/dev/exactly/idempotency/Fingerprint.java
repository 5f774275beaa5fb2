package dev.exactly.idempotency;

/**
 * What a request looked like, so that a key re-used for a different payload is detected.
 *
 * @param algorithm the algorithm id stored with the record, e.g. {@value Fingerprinter#JCS_SHA256}
 * @param value     the digest, lower-case hex
 */
public record Fingerprint(String algorithm, String value) {

    public Fingerprint {
        if (algorithm.isEmpty() || value.isEmpty()) {
            throw new IllegalArgumentException("a fingerprint has an algorithm and a value");
        }
        if (algorithm.indexOf(':') >= 0) {
            throw new IllegalArgumentException("a fingerprint algorithm id holds no ':'");
        }
    }

    /** {@code algorithm:value}, the form stores keep. */
    public String encoded() {
        return algorithm + ":" + value;
    }

    /** Reads the form written by {@link #encoded()}. */
    public static Fingerprint decode(String encoded) {
        int colon = encoded.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("not an encoded fingerprint");
        }
        return new Fingerprint(encoded.substring(0, colon), encoded.substring(colon + 1));
    }
}
