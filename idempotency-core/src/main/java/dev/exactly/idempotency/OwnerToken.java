package dev.exactly.idempotency;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * The fencing token of one claim. Every write after the claim ({@code complete}, {@code release},
 * {@code renew}) names it, and a store applies the write only if the record is still owned by it.
 *
 * @param value 32 hex digits of randomness
 */
public record OwnerToken(String value) {
    /**
     * Generators of unguessable tokens, picked per thread: the platform default takes a process-wide lock
     * and reads the kernel's pool on every call, which every claim would queue on.
     */
    private static final Stripe[] STRIPES = stripes(8);

    private static final HexFormat HEX = HexFormat.of();

    public OwnerToken {
        if (value.isEmpty() || value.length() > 64) {
            throw new IllegalArgumentException("an owner token is 1-64 characters");
        }
    }

    /** A fresh unguessable token: 16 bytes of a keystream no one outside this process can predict. */
    public static OwnerToken random() {
        return new OwnerToken(STRIPES[(int) (Thread.currentThread().threadId() & (STRIPES.length - 1))].next());
    }

    private static Stripe[] stripes(int count) {
        SecureRandom seeds = new SecureRandom();
        Stripe[] stripes = new Stripe[count];
        for (int i = 0; i < count; i++) {
            stripes[i] = Stripe.create(seeds);
        }
        return stripes;
    }

    @Override
    public String toString() {
        return value;
    }

    /**
     * One generator: the keystream of AES-256 in counter mode under a key and starting counter drawn from
     * the platform's entropy source (the construction of NIST's CTR_DRBG), produced a kilobyte at a time and
     * handed out 16 bytes per token. A token costs a copy and its hex digits; a SHA1PRNG, which this replaced,
     * hashed its state once per token (about a microsecond of CPU per claim). Where the platform has no
     * AES in counter mode, tokens come from a seeded SHA1PRNG, or the platform's default generator.
     */
    private static final class Stripe {
        private static final int TOKEN_BYTES = 16;
        private static final int BLOCK_BYTES = 1024;
        private static final byte[] ZEROS = new byte[BLOCK_BYTES];

        private final @Nullable Cipher keystream;
        private final SecureRandom fallback;
        private final byte[] block = new byte[BLOCK_BYTES];
        private int next = BLOCK_BYTES;

        private Stripe(@Nullable Cipher keystream, SecureRandom fallback) {
            this.keystream = keystream;
            this.fallback = fallback;
        }

        static Stripe create(SecureRandom seeds) {
            byte[] key = new byte[32];
            byte[] counter = new byte[16];
            seeds.nextBytes(key);
            seeds.nextBytes(counter);
            try {
                Cipher cipher = Cipher.getInstance("AES/CTR/NoPadding");
                cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(counter));
                return new Stripe(cipher, seeds);
            } catch (GeneralSecurityException | RuntimeException noAesCtr) {
                return new Stripe(null, sha1Prng(seeds));
            }
        }

        private static SecureRandom sha1Prng(SecureRandom seeds) {
            try {
                SecureRandom random = SecureRandom.getInstance("SHA1PRNG");
                byte[] seed = new byte[32];
                seeds.nextBytes(seed);
                random.setSeed(seed);
                return random;
            } catch (GeneralSecurityException absent) {
                return seeds;
            }
        }

        /** The hex digits of the next 16 bytes. */
        synchronized String next() {
            Cipher cipher = keystream;
            if (cipher == null) {
                byte[] bytes = new byte[TOKEN_BYTES];
                fallback.nextBytes(bytes);
                return HEX.formatHex(bytes);
            }
            if (next == BLOCK_BYTES) {
                refill(cipher);
            }
            String token = HEX.formatHex(block, next, next + TOKEN_BYTES);
            next += TOKEN_BYTES;
            return token;
        }

        private void refill(Cipher cipher) {
            try {
                // counter mode: the keystream is the encryption of zeros; the counter runs on across calls
                int written = cipher.update(ZEROS, 0, BLOCK_BYTES, block, 0);
                if (written != BLOCK_BYTES) {
                    throw new IllegalStateException("AES/CTR returned " + written + " of " + BLOCK_BYTES + " bytes");
                }
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("AES/CTR keystream failed", e);
            }
            next = 0;
        }
    }
}
