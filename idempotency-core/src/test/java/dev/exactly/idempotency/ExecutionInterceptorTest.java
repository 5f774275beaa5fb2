package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The interceptor wraps the whole execution on the caller's thread: the listener's events and the action
 * happen inside it, and it sees the engine's result or exception as the caller does.
 */
class ExecutionInterceptorTest {
    private final List<String> trail = new CopyOnWriteArrayList<>();
    private final IdempotencyEngine engine = IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
            .listener(new IdempotencyListener() {
                @Override
                public void onClaim(IdempotencyRequest request, boolean takeover) {
                    trail.add("claim");
                }

                @Override
                public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
                    trail.add("replay");
                }

                @Override
                public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
                    trail.add("mismatch");
                }
            })
            .interceptor((request, execution) -> {
                Thread caller = Thread.currentThread();
                trail.add("before " + request.scope().route());
                try {
                    IdempotentResult result = execution.proceed();
                    trail.add("after " + result.kind() + (Thread.currentThread() == caller ? "" : " elsewhere"));
                    return result;
                } catch (Exception e) {
                    trail.add("failed " + e.getClass().getSimpleName());
                    throw e;
                }
            })
            .build();

    private IdempotencyRequest request(String fingerprint) {
        return IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-1")),
                new Fingerprint("sha256-jcs", fingerprint),
                IdempotencyPolicy.ofDefaults());
    }

    @Test
    void eventsAndTheActionHappenInsideTheInterceptorWhichSeesWhatTheCallerSees() throws Exception {
        StoredResponse created = StoredResponse.of(201, new byte[] {1});
        engine.execute(request("a"), lease -> {
            trail.add("action");
            return Outcome.complete(created);
        });
        assertThat(engine.execute(request("a"), lease -> {
                            trail.add("action again");
                            return Outcome.complete(created);
                        })
                        .replayed())
                .isTrue();
        assertThatThrownBy(() -> engine.execute(request("b"), lease -> Outcome.complete(created)))
                .isInstanceOf(IdempotencyKeyReusedException.class);

        assertThat(trail)
                .containsExactly(
                        "before /v1/charges",
                        "claim",
                        "action",
                        "after EXECUTED",
                        "before /v1/charges",
                        "replay",
                        "after REPLAYED",
                        "before /v1/charges",
                        "mismatch",
                        "failed IdempotencyKeyReusedException");
    }
}
