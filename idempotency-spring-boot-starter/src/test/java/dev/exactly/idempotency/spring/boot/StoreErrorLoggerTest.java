package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.StoreUnavailableException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** Store failures are logged at once, then at most one line per interval that counts what it summed up. */
@ExtendWith(OutputCaptureExtension.class)
class StoreErrorLoggerTest {
    private static final String LINE = "Idempotency store failed on POST /v1/charges";

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T10:00:00Z"));
    private final InstantSource clock = () -> now.get();
    private final IdempotencyRequest request =
            EngineCalls.request("acme", "/v1/charges", "k-1", "{}", IdempotencyPolicy.ofDefaults());

    @Test
    void theFirstFailureIsLoggedAtOnceAndTheNextOnesOncePerInterval(CapturedOutput output) {
        StoreErrorLogger logger = new StoreErrorLogger(clock, Duration.ofSeconds(30));
        StoreUnavailableException down =
                new StoreUnavailableException("idempotency claim: could not reach Redis", null);

        logger.onStoreError(request, down);
        assertThat(lines(output)).isEqualTo(1);
        assertThat(output)
                .contains(LINE + ": guarded requests answer 503 and their handlers do not run until it "
                        + "answers: idempotency claim: could not reach Redis");

        now.set(now.get().plusSeconds(29));
        logger.onStoreError(request, down);
        logger.onStoreError(request, down);
        assertThat(lines(output)).isEqualTo(1);

        now.set(now.get().plusSeconds(1));
        logger.onStoreError(request, down);
        assertThat(lines(output)).isEqualTo(2);
        assertThat(output).contains("until it answers (3 failures since the last line): idempotency claim");
    }

    @Test
    void setUpMistakesGetTheirFix(CapturedOutput output) {
        StoreErrorLogger logger = new StoreErrorLogger(clock, Duration.ofSeconds(30));
        logger.onStoreError(request, failed("42703", "column \"takeovers\" does not exist"));

        assertThat(output)
                .contains("does not exist. The store's table lacks a column it uses: it was not created by "
                        + "db/idempotency/V1__idempotency_records.sql: drop or rename it, or configure another table name for "
                        + "the store; then set exactly.idempotency.postgres.migrate=true");
        assertThat(StoreErrorLogger.hint(failed("42P01", "relation does not exist")))
                .hasValueSatisfying(hint -> assertThat(hint)
                        .startsWith("The store's table is missing: set exactly.idempotency.postgres.migrate=true"));
        assertThat(StoreErrorLogger.hint(failed("42501", "permission denied")))
                .hasValue(
                        "The database user may not use the store's table: grant it SELECT, INSERT, UPDATE and DELETE, and "
                                + "EXECUTE on its claim function");
        assertThat(StoreErrorLogger.hint(failed("42883", "function idempotency_records_claim does not exist")))
                .hasValueSatisfying(hint -> assertThat(hint)
                        .startsWith("The store's claim function is missing")
                        .contains("exactly.idempotency.postgres.migrate=true to upgrade the table"));
        assertThat(StoreErrorLogger.hint(failed("08001", "connection refused"))).isEmpty();
        assertThat(StoreErrorLogger.hint(new IllegalStateException("no SQL here")))
                .isEmpty();
    }

    @Test
    void aMultiLineMessageIsLoggedOnOneLine(CapturedOutput output) {
        StoreErrorLogger logger = new StoreErrorLogger(clock, Duration.ofSeconds(30));
        logger.onStoreError(
                request, failed("42P01", "ERROR: relation \"idempotency_records\" does not exist\n  Position: 15"));

        assertThat(output.getOut()).contains("does not exist Position: 15. The store's table is missing");
    }

    @Test
    void theIntervalMustBePositive() {
        assertThatThrownBy(() -> new StoreErrorLogger(clock, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static StoreUnavailableException failed(String sqlState, String message) {
        return new StoreUnavailableException(
                "idempotency claim: PostgreSQL failed (SQLState " + sqlState + "): " + message,
                new SQLException(message, sqlState));
    }

    private static int lines(CapturedOutput output) {
        return output.getOut().split(LINE, -1).length - 1;
    }
}
