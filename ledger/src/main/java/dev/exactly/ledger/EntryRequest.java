package dev.exactly.ledger;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A journal entry to post. Construction checks everything that does not need the database: at least
 * two postings, debits equal to credits in every currency (exact, overflow-checked), the kind's link to
 * an original entry, the reference and description lengths. {@link Ledger#post} then checks the
 * accounts and their currencies, and the database checks the balance again at commit.
 * <pre>{@code
 * EntryRequest charge = EntryRequest.builder()
 *         .debit(clearing.id(), Money.parse("100.00", "USD"))
 *         .credit(customer.id(), Money.parse("100.00", "USD"))
 *         .externalRef("charge:ch_123")
 *         .description("charge ch_123")
 *         .build();
 * }</pre>
 *
 * @param kind            standard, refund or adjustment ({@link EntryKind#REVERSAL} is made by
 *                        {@link Ledger#reverse})
 * @param originalEntryId the entry this one refunds or adjusts; required for a refund
 * @param externalRef     a unique business reference (1 to 255 characters): a second entry with the
 *                        same reference is refused, even from a racing writer; {@code null} for none
 * @param description     free text, up to 1000 characters
 * @param postings        the lines, at least two
 */
public record EntryRequest(
        EntryKind kind,
        @Nullable Long originalEntryId,
        @Nullable String externalRef,
        String description,
        List<PostingRequest> postings) {

    /** The most postings one entry may have. */
    public static final int MAX_POSTINGS = 1000;

    public EntryRequest {
        postings = List.copyOf(postings);
        if (postings.size() < 2) {
            throw new LedgerValidationException(
                    Reason.TOO_FEW_POSTINGS, "an entry needs at least 2 postings, got " + postings.size());
        }
        if (postings.size() > MAX_POSTINGS) {
            throw new LedgerValidationException(
                    Reason.INVALID_ENTRY, "an entry may have at most " + MAX_POSTINGS + " postings");
        }
        if (kind.requiresOriginal() && originalEntryId == null) {
            throw new LedgerValidationException(
                    Reason.INVALID_ENTRY, "a " + kind.dbValue() + " must name its original entry");
        }
        if (!kind.allowsOriginal() && originalEntryId != null) {
            throw new LedgerValidationException(
                    Reason.INVALID_ENTRY, "a " + kind.dbValue() + " entry links to no original");
        }
        if (externalRef != null && (externalRef.isEmpty() || externalRef.length() > 255)) {
            throw new LedgerValidationException(
                    Reason.INVALID_ENTRY, "an external reference must have 1 to 255 characters");
        }
        if (description.length() > 1000) {
            throw new LedgerValidationException(Reason.INVALID_ENTRY, "a description may have at most 1000 characters");
        }
        requireBalanced(postings);
    }

    /** A builder for a {@link EntryKind#STANDARD} entry. */
    public static Builder builder() {
        return new Builder(EntryKind.STANDARD, null);
    }

    /** A builder for a refund of {@code originalEntryId} (full or partial; several may exist). */
    public static Builder refundOf(long originalEntryId) {
        return new Builder(EntryKind.REFUND, originalEntryId);
    }

    /** A builder for an adjustment linked to {@code originalEntryId}. */
    public static Builder adjustmentOf(long originalEntryId) {
        return new Builder(EntryKind.ADJUSTMENT, originalEntryId);
    }

    /** Σdebits and Σcredits per currency, each with exact arithmetic. */
    private static void requireBalanced(List<PostingRequest> postings) {
        Map<String, long[]> sums = new TreeMap<>();
        for (PostingRequest p : postings) {
            long[] sum = sums.computeIfAbsent(p.amount().currency().code(), c -> new long[2]);
            int column = p.side() == Side.DEBIT ? 0 : 1;
            sum[column] =
                    Money.exact(() -> Math.addExact(sum[column], p.amount().minorUnits()));
        }
        List<String> unbalanced = new ArrayList<>();
        sums.forEach((currency, sum) -> {
            if (sum[0] != sum[1]) {
                Currency c = Currency.of(currency);
                unbalanced.add(
                        currency + " (debits " + Money.of(sum[0], c).toDecimal().toPlainString() + ", credits "
                                + Money.of(sum[1], c).toDecimal().toPlainString() + ")");
            }
        });
        if (!unbalanced.isEmpty()) {
            throw new LedgerValidationException(
                    Reason.UNBALANCED, "debits and credits differ in " + String.join(", ", unbalanced));
        }
    }

    /** Collects the lines of an entry; {@link #build()} validates it. */
    public static final class Builder {
        private final EntryKind kind;
        private final @Nullable Long originalEntryId;
        private final List<PostingRequest> postings = new ArrayList<>();
        private @Nullable String externalRef;
        private String description = "";

        private Builder(EntryKind kind, @Nullable Long originalEntryId) {
            this.kind = kind;
            this.originalEntryId = originalEntryId;
        }

        /** Adds a debit of {@code amount} to {@code accountId}. */
        public Builder debit(long accountId, Money amount) {
            return posting(PostingRequest.debit(accountId, amount));
        }

        /** Adds a credit of {@code amount} to {@code accountId}. */
        public Builder credit(long accountId, Money amount) {
            return posting(PostingRequest.credit(accountId, amount));
        }

        /** Adds a line. */
        public Builder posting(PostingRequest posting) {
            postings.add(posting);
            return this;
        }

        /** Sets the unique business reference. */
        public Builder externalRef(@Nullable String externalRef) {
            this.externalRef = externalRef;
            return this;
        }

        /** Sets the description. */
        public Builder description(String description) {
            this.description = description;
            return this;
        }

        /** The validated request. */
        public EntryRequest build() {
            return new EntryRequest(kind, originalEntryId, externalRef, description, postings);
        }
    }
}
