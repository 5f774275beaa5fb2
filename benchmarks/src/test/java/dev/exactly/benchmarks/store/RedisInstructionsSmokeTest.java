package dev.exactly.benchmarks.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.Ci;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Runs the instruction counts for a few operations per phase and checks that they measure what they
 * claim: each phase is counted alone (its own commands, a positive total), the floor sends the commands
 * it names, and the store's fresh key and replay send the store's commands (a claim, a completion, a
 * replay in one command). Never the figures themselves.
 */
class RedisInstructionsSmokeTest {
    private static final int OPERATIONS = 40;

    @Test
    void everyPhaseIsCountedAloneWithTheCommandsItSends() throws Exception {
        if (!RedisInstructions.available()) {
            if (Ci.strict()) {
                throw new IllegalStateException("CI=true requires redis-server and valgrind on the PATH");
            }
            Assumptions.abort("redis-server or valgrind is not on the PATH");
        }
        List<RedisInstructions.Phase> phases =
                RedisInstructions.run(OPERATIONS, new PrintStream(new ByteArrayOutputStream()));

        assertThat(phases)
                .extracting(RedisInstructions.Phase::name)
                .containsExactly(
                        "floor, fresh key",
                        "fenced floor, fresh key",
                        "store, fresh key",
                        "floor, replay",
                        "store, replay");
        assertThat(phases).allSatisfy(phase -> {
            assertThat(phase.operations()).isEqualTo(OPERATIONS);
            assertThat(phase.instructions()).isPositive();
        });
        // the floor: two SETs per fresh key, one GET per replay, nothing else
        assertThat(phases.get(0).commands()).containsExactlyEntriesOf(java.util.Map.of("set", 2L * OPERATIONS));
        assertThat(phases.get(3).commands()).containsExactlyEntriesOf(java.util.Map.of("get", (long) OPERATIONS));
        // the fenced floor: a claim, then a script reading and writing the key
        assertThat(phases.get(1).commands())
                .containsExactlyInAnyOrderEntriesOf(java.util.Map.of(
                        "set", 2L * OPERATIONS, "evalsha", (long) OPERATIONS, "get", (long) OPERATIONS));
        // the store: a claim (SET ... NX GET) and a completion script per fresh key; a replay, once most keys are
        // replays, one GET
        assertThat(phases.get(2).commands()).containsEntry("evalsha", (long) OPERATIONS);
        assertThat(phases.get(2).commands().get("set")).isGreaterThanOrEqualTo((long) OPERATIONS);
        assertThat(phases.get(4).commands()).containsExactlyEntriesOf(java.util.Map.of("get", (long) OPERATIONS));
        // a script costs the server more than a plain command: the counts see what each phase ran
        assertThat(phases.get(1).instructions()).isGreaterThan(phases.get(0).instructions());

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RedisInstructions.report(phases, new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("store, fresh key", "vs floor", "vs fenced floor");
    }
}
