package dev.exactly.psp;

import java.net.InetAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;

/**
 * How a {@link PspSimulator} runs. Immutable; build with {@link #ofDefaults()}, {@link #custom()} or
 * {@link #from}.
 *
 * @param bindAddress            address to listen on (default: loopback)
 * @param port                   TCP port, 0 for a free one
 * @param clock                  source of charge and capture times
 * @param faults                 the faults of the run at start (changeable later)
 * @param maxBodyBytes           larger request bodies get 413
 * @param honourIdempotencyKeys  false only for a deliberately broken processor that captures every
 *                               request, replays nothing and never answers 422 (to prove that a
 *                               checker catches double captures; the same for captures, voids and
 *                               refunds)
 * @param authorizationTtl       how long a hold ({@code "capture": false}) stands before it expires
 *                               (default 7 days; whole seconds, at least 1 s)
 */
public record PspConfig(
        InetAddress bindAddress,
        int port,
        InstantSource clock,
        FaultSettings faults,
        int maxBodyBytes,
        boolean honourIdempotencyKeys,
        Duration authorizationTtl) {

    /** The default {@link #authorizationTtl()}: 7 days. */
    public static final Duration DEFAULT_AUTHORIZATION_TTL = Duration.ofDays(7);

    private static final PspConfig DEFAULTS = new PspConfig(
            InetAddress.getLoopbackAddress(),
            0,
            InstantSource.system(),
            FaultSettings.none(),
            64 * 1024,
            true,
            DEFAULT_AUTHORIZATION_TTL);

    public PspConfig {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(faults, "faults");
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be in [0, 65535], was " + port);
        }
        if (maxBodyBytes < 1024 || maxBodyBytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("maxBodyBytes must be in [1 KiB, 16 MiB], was " + maxBodyBytes);
        }
        Objects.requireNonNull(authorizationTtl, "authorizationTtl");
        if (authorizationTtl.compareTo(Duration.ofSeconds(1)) < 0 || authorizationTtl.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException("authorizationTtl must be a whole number of seconds, at least 1 s");
        }
    }

    /** Loopback, a free port, the system clock, no faults, 64 KiB bodies, keys honoured, holds for 7 days. */
    public static PspConfig ofDefaults() {
        return DEFAULTS;
    }

    public static Builder custom() {
        return new Builder(DEFAULTS);
    }

    public static Builder from(PspConfig base) {
        return new Builder(base);
    }

    /** Validating builder. */
    public static final class Builder {
        private InetAddress bindAddress;
        private int port;
        private InstantSource clock;
        private FaultSettings faults;
        private int maxBodyBytes;
        private boolean honourIdempotencyKeys;
        private Duration authorizationTtl;

        private Builder(PspConfig base) {
            bindAddress = base.bindAddress;
            port = base.port;
            clock = base.clock;
            faults = base.faults;
            maxBodyBytes = base.maxBodyBytes;
            honourIdempotencyKeys = base.honourIdempotencyKeys;
            authorizationTtl = base.authorizationTtl;
        }

        public Builder bindAddress(InetAddress bindAddress) {
            this.bindAddress = bindAddress;
            return this;
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder clock(InstantSource clock) {
            this.clock = clock;
            return this;
        }

        public Builder faults(FaultSettings faults) {
            this.faults = faults;
            return this;
        }

        public Builder maxBodyBytes(int maxBodyBytes) {
            this.maxBodyBytes = maxBodyBytes;
            return this;
        }

        /** Pass false only to build the deliberately broken processor (see {@link PspConfig}). */
        public Builder honourIdempotencyKeys(boolean honour) {
            this.honourIdempotencyKeys = honour;
            return this;
        }

        /** How long a hold stands before it expires (whole seconds, at least 1 s). */
        public Builder authorizationTtl(Duration ttl) {
            this.authorizationTtl = ttl;
            return this;
        }

        public PspConfig build() {
            return new PspConfig(
                    bindAddress, port, clock, faults, maxBodyBytes, honourIdempotencyKeys, authorizationTtl);
        }
    }
}
