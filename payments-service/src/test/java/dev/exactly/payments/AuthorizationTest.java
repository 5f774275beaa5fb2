package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.payments.charge.RecoveryWorker;
import dev.exactly.psp.ChargeStatus;
import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultKind;
import dev.exactly.psp.PspOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/**
 * Authorize, then capture or void, over real HTTP against PostgreSQL and the in-process processor: the
 * hold is pending in the ledger and not available, a capture (full or partial) or a void resolves it once,
 * whatever the keys, the races and the lost answers; expired authorizations are voided by the worker. The
 * ledger balances after every step.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AuthorizationTest extends DefaultServiceTest {

    @Autowired
    RecoveryWorker worker;

    private static String authorization(long amount, String customer) {
        return "{\"amount\":" + amount + ",\"currency\":\"usd\",\"customer\":\"" + customer + "\",\"capture\":false}";
    }

    /** Authorizes and returns the charge. */
    private JsonNode authorize(String key, long amount, String customer) {
        Answer answer = post("/v1/charges", ACME, key, authorization(amount, customer));
        assertThat(answer.status()).as(answer.text()).isEqualTo(201);
        assertThat(answer.json().get("status").stringValue()).isEqualTo("authorized");
        assertLedgerBalanced();
        return answer.json();
    }

    private long available(String customer) {
        return balanceLine(customer, "available");
    }

    private long pending(String customer) {
        return balanceLine(customer, "pending");
    }

    private long balanceLine(String customer, String kind) {
        Answer balance = get("/v1/customers/" + customer + "/balance", ACME);
        assertThat(balance.status()).as(balance.text()).isEqualTo(200);
        JsonNode lines = balance.json().get(kind);
        assertThat(lines.size()).as(balance.text()).isEqualTo(1);
        return lines.get(0).get("amount").longValue();
    }

    /** Captures the processor made of this processor charge. */
    private long processorCaptures(String processorCharge) {
        return psp().captures().stream()
                .filter(c -> c.chargeId().equals(processorCharge))
                .count();
    }

    private ChargeStatus atProcessor(JsonNode charge) {
        return psp().findById(charge.get("processor_charge").stringValue())
                .orElseThrow()
                .status();
    }

    private long ledgerEntries(String reference) {
        return count("SELECT count(*) FROM ledger_entry WHERE external_ref = ?", reference);
    }

    @Test
    void anAuthorizationIsPendingInTheLedgerNotAvailableAndReplayed() {
        String body = authorization(1200, "cus_auth");
        Answer first = post("/v1/charges", ACME, "auth-1", body);
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        JsonNode charge = first.json();
        String id = charge.get("id").stringValue();
        assertThat(charge.get("status").stringValue()).isEqualTo("authorized");
        assertThat(charge.get("amount_captured").longValue()).isZero();
        assertThat(atProcessor(charge)).isEqualTo(ChargeStatus.AUTHORIZED);
        assertThat(processorCaptures(charge.get("processor_charge").stringValue()))
                .isZero();

        assertThat(available("cus_auth")).isZero();
        assertThat(pending("cus_auth")).isEqualTo(1200);
        assertThat(ledgerEntries("auth:" + id)).as("the hold").isEqualTo(1);
        assertThat(entriesOf(id)).as("nothing posted").isZero();
        assertLedgerBalanced();

        Answer again = post("/v1/charges", ACME, "auth-1", body);
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(ledgerEntries("auth:" + id)).isEqualTo(1);

        // the tenant's trial balance: the hold's pending amounts balance by themselves, on the pending columns
        JsonNode usd = null;
        for (JsonNode total : get("/v1/ledger/trial-balance", ACME).json().get("totals")) {
            if (total.get("currency").stringValue().equals("usd")) {
                usd = total;
            }
        }
        assertThat(usd).isNotNull();
        assertThat(usd.get("balanced").booleanValue()).isTrue();
        assertThat(usd.get("pending_debits").longValue())
                .isEqualTo(usd.get("pending_credits").longValue())
                .isGreaterThanOrEqualTo(1200);
        assertThat(get("/v1/charges/" + id, ACME).json().get("status").stringValue())
                .isEqualTo("authorized");
    }

    @Test
    void aNullAmountOrCaptureFlagIsRefusedNotTakenForTheWholeAmount() {
        JsonNode charge = authorize("auth-null", 3000, "cus_null");
        String id = charge.get("id").stringValue();

        // a client whose partial amount came out null meant some amount, not all of it
        Answer capture = post("/v1/charges/" + id + "/capture", ACME, "cap-null-1", "{\"amount\":null}");
        assertThat(capture.status()).as(capture.text()).isEqualTo(422);
        assertThat(capture.text()).contains("parameter_invalid").contains("amount");
        assertThat(get("/v1/charges/" + id, ACME).json().get("status").stringValue())
                .isEqualTo("authorized");
        assertThat(processorCaptures(charge.get("processor_charge").stringValue()))
                .isZero();

        // nor is a capture flag that came out null a decision to capture now
        long before = count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_null'");
        Answer create = post(
                "/v1/charges",
                ACME,
                "auth-null-flag",
                "{\"amount\":500,\"currency\":\"usd\",\"customer\":\"cus_null\",\"capture\":null}");
        assertThat(create.status()).as(create.text()).isEqualTo(422);
        assertThat(create.text()).contains("parameter_invalid").contains("capture");
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_null'"))
                .isEqualTo(before);
        assertLedgerBalanced();
    }

    @Test
    void aFullCaptureMovesTheAmountOnceWhateverTheKeys() {
        JsonNode charge = authorize("auth-full", 2000, "cus_full");
        String id = charge.get("id").stringValue();
        String processorCharge = charge.get("processor_charge").stringValue();

        Answer captured = post("/v1/charges/" + id + "/capture", ACME, "cap-full-1", "{}");
        assertThat(captured.status()).as(captured.text()).isEqualTo(200);
        assertThat(captured.json().get("status").stringValue()).isEqualTo("succeeded");
        assertThat(captured.json().get("amount_captured").longValue()).isEqualTo(2000);
        assertThat(available("cus_full")).isEqualTo(2000);
        assertThat(pending("cus_full")).isZero();
        assertLedgerBalanced();

        Answer replay = post("/v1/charges/" + id + "/capture", ACME, "cap-full-1", "{ }");
        assertThat(replay.status()).isEqualTo(200);
        assertThat(replay.body()).isEqualTo(captured.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        JsonNode key = get("/v1/idempotency-keys/cap-full-1", ACME).json();
        assertThat(key.get("route").stringValue()).isEqualTo("POST /v1/charges/{id}/capture");
        assertThat(key.get("status").stringValue()).isEqualTo("completed");
        assertThat(key.get("resource").get("object").stringValue()).isEqualTo("capture");
        assertThat(key.get("resource").get("status").stringValue()).isEqualTo("succeeded");

        Answer again = post("/v1/charges/" + id + "/capture", ACME, "cap-full-2", "{}");
        assertThat(again.status()).as(again.text()).isEqualTo(409);
        assertThat(again.problemType()).isEqualTo("charge-already-captured");
        Answer voided = post("/v1/charges/" + id + "/void", ACME, "void-full-1", "{}");
        assertThat(voided.status()).as(voided.text()).isEqualTo(409);
        assertThat(voided.problemType()).isEqualTo("charge-already-captured");
        assertThat(voided.json().get("detail").stringValue()).endsWith("it cannot be voided");
        assertThat(again.json().get("detail").stringValue()).endsWith("it cannot be captured");
        assertThat(post("/v1/charges/" + id + "/void", ACME, "void-full-1", "{}")
                        .body())
                .as("a refusal is recorded and replayed")
                .isEqualTo(voided.body());

        assertThat(processorCaptures(processorCharge)).isEqualTo(1);
        assertThat(atProcessor(charge)).isEqualTo(ChargeStatus.CAPTURED);
        assertThat(ledgerEntries("capture:" + id)).isEqualTo(1);
        assertThat(available("cus_full")).isEqualTo(2000);
        assertThat(count("SELECT count(*) FROM payments_event WHERE subject_id = ? AND type = 'charge.captured'", id))
                .isEqualTo(1);

        // the same key on another charge's capture is a reused key, never that charge's answer
        JsonNode other = authorize("auth-full-other", 100, "cus_full");
        Answer reused = post("/v1/charges/" + other.get("id").stringValue() + "/capture", ACME, "cap-full-1", "{}");
        assertThat(reused.status()).as(reused.text()).isEqualTo(422);
        assertThat(reused.problemType()).isEqualTo("idempotency-key-reused");
        assertLedgerBalanced();
    }

    @Test
    void aPartialCaptureReleasesTheRestAndBoundsRefunds() {
        JsonNode charge = authorize("auth-part", 1000, "cus_part");
        String id = charge.get("id").stringValue();

        Answer tooMuch = post("/v1/charges/" + id + "/capture", ACME, "cap-part-0", "{\"amount\":1001}");
        assertThat(tooMuch.status()).as(tooMuch.text()).isEqualTo(402);
        assertThat(tooMuch.problemType()).isEqualTo("capture-exceeds-authorization");
        Answer invalid = post("/v1/charges/" + id + "/capture", ACME, "cap-part-x", "{\"amount\":-5,\"x\":1}");
        assertThat(invalid.status()).as(invalid.text()).isEqualTo(422);
        assertThat(invalid.problemType()).isEqualTo("validation-failed");

        Answer captured = post("/v1/charges/" + id + "/capture", ACME, "cap-part-1", "{\"amount\":600}");
        assertThat(captured.status()).as(captured.text()).isEqualTo(200);
        assertThat(captured.json().get("amount_captured").longValue()).isEqualTo(600);
        assertThat(captured.json().get("amount").longValue()).isEqualTo(1000);
        assertThat(available("cus_part")).isEqualTo(600);
        assertThat(pending("cus_part")).as("the rest is released").isZero();
        assertThat(psp().findById(charge.get("processor_charge").stringValue())
                        .orElseThrow()
                        .amountCaptured())
                .isEqualTo(600);
        assertLedgerBalanced();

        Answer overRefund = post("/v1/refunds", ACME, "ref-part-1", "{\"charge\":\"" + id + "\",\"amount\":601}");
        assertThat(overRefund.status()).as(overRefund.text()).isEqualTo(422);
        Answer refund = post("/v1/refunds", ACME, "ref-part-2", "{\"charge\":\"" + id + "\",\"amount\":600}");
        assertThat(refund.status()).as(refund.text()).isEqualTo(201);
        assertThat(available("cus_part")).isZero();
        assertLedgerBalanced();
    }

    @Test
    void aVoidReleasesTheHoldAndRefusesALaterCapture() {
        JsonNode charge = authorize("auth-void", 700, "cus_void");
        String id = charge.get("id").stringValue();

        Answer voided = post("/v1/charges/" + id + "/void", ACME, "void-1", "");
        assertThat(voided.status()).as(voided.text()).isEqualTo(200);
        assertThat(voided.json().get("status").stringValue()).isEqualTo("voided");
        assertThat(available("cus_void")).isZero();
        assertThat(pending("cus_void")).isZero();
        assertThat(atProcessor(charge)).isEqualTo(ChargeStatus.VOIDED);
        assertThat(ledgerEntries("void:" + id)).isEqualTo(1);
        assertLedgerBalanced();

        Answer capture = post("/v1/charges/" + id + "/capture", ACME, "cap-void-1", "{}");
        assertThat(capture.status()).as(capture.text()).isEqualTo(409);
        assertThat(capture.problemType()).isEqualTo("charge-voided");
        Answer again = post("/v1/charges/" + id + "/void", ACME, "void-2", "{}");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.problemType()).isEqualTo("charge-voided");
        assertThat(count("SELECT count(*) FROM payments_event WHERE subject_id = ? AND type = 'charge.voided'", id))
                .isEqualTo(1);

        // a charge captured at once holds no authorization to void
        String direct = post("/v1/charges", ACME, "auth-void-direct", charge(300, "cus_void"))
                .json()
                .get("id")
                .stringValue();
        Answer refused = post("/v1/charges/" + direct + "/void", ACME, "void-direct", "{}");
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.problemType()).isEqualTo("charge-already-captured");
        assertThat(post("/v1/charges/ch_nope/capture", ACME, "cap-missing", "{}")
                        .status())
                .isEqualTo(404);
        assertLedgerBalanced();
    }

    @Test
    void concurrentCapturesAndVoidsResolveEachAuthorizationExactlyOnce() throws Exception {
        for (int round = 0; round < 3; round++) {
            JsonNode charge = authorize("auth-race-" + round, 900, "cus_race");
            String id = charge.get("id").stringValue();
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Answer>> answers = new ArrayList<>();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < 8; i++) {
                    String action = i % 2 == 0 ? "capture" : "void";
                    String key = "race-" + round + "-" + i;
                    answers.add(pool.submit(() -> {
                        go.await();
                        return settle("/v1/charges/" + id + "/" + action, key);
                    }));
                }
                go.countDown();
            }
            List<Answer> done = new ArrayList<>();
            for (Future<Answer> f : answers) {
                done.add(f.get());
            }
            assertThat(done).filteredOn(a -> a.status() == 200).as("one winner").hasSize(1);
            String status = done.stream()
                    .filter(a -> a.status() == 200)
                    .findFirst()
                    .orElseThrow()
                    .json()
                    .get("status")
                    .stringValue();
            assertThat(done).filteredOn(a -> a.status() != 200).allSatisfy(a -> {
                assertThat(a.status()).as(a.text()).isEqualTo(409);
                assertThat(a.problemType())
                        .isEqualTo(status.equals("voided") ? "charge-voided" : "charge-already-captured");
            });
            String processorCharge = charge.get("processor_charge").stringValue();
            assertThat(processorCaptures(processorCharge)).isEqualTo(status.equals("voided") ? 0 : 1);
            assertThat(atProcessor(charge))
                    .isEqualTo(status.equals("voided") ? ChargeStatus.VOIDED : ChargeStatus.CAPTURED);
            assertThat(ledgerEntries("capture:" + id) + ledgerEntries("void:" + id))
                    .isEqualTo(1);
            assertLedgerBalanced();
        }
    }

    /** Posts until the answer is settled (a 409 for an action in progress or a key in flight is retried). */
    private Answer settle(String path, String key) {
        AtomicReference<Answer> last = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    Answer a = post(path, ACME, key, "{}");
                    last.set(a);
                    return !(a.status() == 409
                                    && (a.problemType().equals("charge-action-in-progress")
                                            || a.problemType().equals("idempotency-key-in-use")))
                            && a.status() != 503;
                });
        return last.get();
    }

    @Test
    void aCaptureWhoseAnswersAreLostCapturesOnce() {
        JsonNode charge = authorize("auth-drop", 1500, "cus_drop_cap");
        String id = charge.get("id").stringValue();
        // every attempt of the service's processor call loses the processor's answer
        psp().failNext(PspOperation.CAPTURE, 3, Fault.dropResponse());
        Answer dropped = post("/v1/charges/" + id + "/capture", ACME, "cap-drop-1", "{}");
        assertThat(dropped.status()).as(dropped.text()).isEqualTo(503);
        assertThat(dropped.problemType()).isEqualTo("processor-unavailable");
        assertThat(psp().stats().fired(PspOperation.CAPTURE, FaultKind.DROP_RESPONSE))
                .as("the fault hit")
                .isPositive();
        assertThat(processorCaptures(charge.get("processor_charge").stringValue()))
                .as("captured at the processor")
                .isEqualTo(1);
        assertThat(chargeStatus(id)).isEqualTo("authorized");
        // a capture with another key meanwhile waits for it, and is never sent
        Answer other = post("/v1/charges/" + id + "/capture", ACME, "cap-drop-2", "{}");
        assertThat(other.status()).as(other.text()).isEqualTo(409);
        assertThat(other.problemType()).isEqualTo("charge-action-in-progress");

        Answer done = settle("/v1/charges/" + id + "/capture", "cap-drop-1");
        assertThat(done.status()).as(done.text()).isEqualTo(200);
        assertThat(done.json().get("status").stringValue()).isEqualTo("succeeded");
        assertThat(processorCaptures(charge.get("processor_charge").stringValue()))
                .isEqualTo(1);
        assertThat(ledgerEntries("capture:" + id)).isEqualTo(1);
        assertThat(available("cus_drop_cap")).isEqualTo(1500);
        assertLedgerBalanced();
    }

    @Test
    void theWorkerFinishesACaptureWhoseRequestGotNoAnswer() {
        JsonNode charge = authorize("auth-worker", 1300, "cus_worker_cap");
        String id = charge.get("id").stringValue();
        long resumedBefore = worker.recoveredCount();
        psp().failNext(PspOperation.CAPTURE, 3, Fault.dropResponse());
        Answer dropped = post("/v1/charges/" + id + "/capture", ACME, "cap-worker-1", "{\"amount\":1000}");
        assertThat(dropped.status()).as(dropped.text()).isEqualTo(503);
        assertThat(chargeStatus(id)).isEqualTo("authorized");

        // nobody retries: the recovery worker takes the capture's record over and finishes it
        await().atMost(Duration.ofSeconds(30)).until(() -> chargeStatus(id).equals("succeeded"));
        assertThat(worker.recoveredCount()).as("resumed by the worker").isGreaterThan(resumedBefore);
        assertThat(processorCaptures(charge.get("processor_charge").stringValue()))
                .isEqualTo(1);
        assertThat(ledgerEntries("capture:" + id)).isEqualTo(1);
        assertThat(available("cus_worker_cap")).isEqualTo(1000);
        assertThat(pending("cus_worker_cap")).isZero();
        Answer late = post("/v1/charges/" + id + "/capture", ACME, "cap-worker-1", "{\"amount\":1000}");
        assertThat(late.status()).as(late.text()).isEqualTo(200);
        assertThat(late.json().get("amount_captured").longValue()).isEqualTo(1000);
        assertLedgerBalanced();
    }

    @Test
    void anExpiredAuthorizationIsVoidedByTheWorker() {
        JsonNode charge = authorize("auth-expire", 800, "cus_expire");
        String id = charge.get("id").stringValue();
        JsonNode fresh = authorize("auth-expire-fresh", 50, "cus_expire");
        assertThat(pending("cus_expire")).isEqualTo(850);
        // created eight days ago: past the default time to live of seven days
        jdbc.inTransaction(c -> dev.exactly.payments.db.Jdbc.update(
                c,
                "UPDATE payments_charge SET created_at = created_at - interval '8 days' WHERE id = ?",
                s -> s.setString(1, id)));

        await().atMost(Duration.ofSeconds(30)).until(() -> chargeStatus(id).equals("voided"));
        assertThat(atProcessor(charge)).isEqualTo(ChargeStatus.VOIDED);
        assertThat(ledgerEntries("void:" + id)).isEqualTo(1);
        assertThat(pending("cus_expire")).isEqualTo(50);
        assertThat(chargeStatus(fresh.get("id").stringValue())).isEqualTo("authorized");
        assertThat(count("SELECT count(*) FROM payments_charge_action WHERE charge_id = ? AND origin = 'expiry'", id))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM payments_event WHERE subject_id = ? AND type = 'charge.voided'", id))
                .isEqualTo(1);
        Answer capture = post("/v1/charges/" + id + "/capture", ACME, "cap-expired", "{}");
        assertThat(capture.status()).isEqualTo(409);
        assertThat(capture.problemType()).isEqualTo("charge-voided");
        assertLedgerBalanced();
    }
}
