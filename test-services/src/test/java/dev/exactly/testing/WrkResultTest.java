package dev.exactly.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WrkResultTest {
    private static final String CLEAN = """
            Running 5s test @ http://127.0.0.1:8080/v1/charges
              2 threads and 32 connections
            EXACTLY responses=1000 checked=1000 failed=0 connect=0 read=0 write=0 timeout=0 duration_us=5000000 fresh=1000
            """;

    @Test
    void aCleanRunHasItsFiguresAndNoSamples() {
        WrkResult result = WrkResult.parse(CLEAN);
        assertThat(result.responses()).isEqualTo(1000);
        assertThat(result.unchecked()).isZero();
        assertThat(result.socketErrors()).isZero();
        assertThat(result.figure("fresh")).isEqualTo(1000);
        assertThat(result.samples()).isEmpty();
    }

    @Test
    void failedChecksUncheckedAnswersAndSocketErrorsAreEachSampled() {
        WrkResult result = WrkResult.parse("""
                EXACTLY-ERROR status 500 for key k1
                EXACTLY responses=10 checked=7 failed=1 connect=1 read=2 write=0 timeout=3 duration_us=1
                """);
        assertThat(result.unchecked()).isEqualTo(3);
        assertThat(result.socketErrors()).isEqualTo(6);
        assertThat(result.samples())
                .containsExactly(
                        "status 500 for key k1",
                        "3 answers were not checked",
                        "socket errors: connect 1, read 2, write 0, timeout 3");
    }

    @Test
    void aFigureTheLineDoesNotHoldIsRefusedByName() {
        WrkResult result = WrkResult.parse(CLEAN);
        assertThatThrownBy(() -> result.figure("p99_us"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has no p99_us");
        assertThatThrownBy(() -> WrkResult.parse("EXACTLY responses=1 checked=1\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has no connect");
    }

    @Test
    void outputWithoutAResultLineOrWithAFigureThatIsNotANumberIsRefused() {
        assertThatThrownBy(() -> WrkResult.parse("unable to connect to 127.0.0.1:8080 Connection refused\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no result line")
                .hasMessageContaining("Connection refused");
        assertThatThrownBy(() -> WrkResult.parse("EXACTLY responses=12x checked=1\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'responses=12x', not a whole number");
        assertThatThrownBy(() -> WrkResult.parse("EXACTLY responses\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not name=value");
    }
}
