package dev.exactly.payments.ledger;

import dev.exactly.ledger.Money;
import java.util.List;

/**
 * What the tenant owes a customer, per currency.
 *
 * @param customer the customer
 * @param balances one per currency with an account
 */
public record CustomerBalance(String customer, List<Balance> balances) {
    public CustomerBalance {
        balances = List.copyOf(balances);
    }

    /**
     * The balance of one of the customer's accounts.
     *
     * @param account the account as the tenant names it ({@code customer:cus_1:usd})
     * @param amount  the available balance (posted entries only)
     * @param pending what open authorizations hold on it (net), outside the available balance
     */
    public record Balance(String account, Money amount, Money pending) {}
}
