package dev.once.examples.payments;

import dev.once.Scope;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The double-entry ledger: wallets, payments and their entries. Every method runs in the caller's
 * transaction (in transactional mode, the one the idempotency claim is part of).
 */
@Repository
class Ledger {

  /**
   * A wallet, locked for the rest of the transaction.
   *
   * @param balance in minor units
   */
  record Account(String id, String currency, long balance) {}

  private final JdbcTemplate jdbc;

  Ledger(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  /** The merchant whose secret key this is; keys are compared by their SHA-256, never stored. */
  Optional<String> merchantOf(String apiKey) {
    String hash = Scope.hash(apiKey).substring("sha256:".length());
    return jdbc
        .queryForList("SELECT id FROM pay_merchants WHERE api_key_sha256 = ?", String.class, hash)
        .stream()
        .findFirst();
  }

  /**
   * Locks the merchant's wallets among these ids, always in id order, so two payments between the
   * same wallets in opposite directions never wait on each other in a cycle.
   */
  List<Account> lock(String merchant, String a, String b) {
    return jdbc.query(
        "SELECT id, currency, balance FROM pay_accounts WHERE id IN (?, ?) AND merchant_id = ?"
            + " ORDER BY id FOR UPDATE",
        (rs, i) ->
            new Account(rs.getString("id"), rs.getString("currency").trim(), rs.getLong("balance")),
        a,
        b,
        merchant);
  }

  /** Books a payment: its row, a debit and a credit that sum to zero, and the two balances. */
  void book(String merchant, Payment p) {
    Timestamp now = Timestamp.from(Instant.now());
    jdbc.update(
        "INSERT INTO pay_payments (id, merchant_id, amount, currency, source, destination, status, created_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        p.id(),
        merchant,
        p.amount(),
        p.currency(),
        p.source(),
        p.destination(),
        p.status(),
        now);
    entry(p.id(), p.source(), -p.amount(), now);
    entry(p.id(), p.destination(), p.amount(), now);
  }

  private void entry(String payment, String account, long amount, Timestamp at) {
    jdbc.update(
        "INSERT INTO pay_ledger_entries (payment_id, account_id, amount, created_at) VALUES (?, ?, ?, ?)",
        payment,
        account,
        amount,
        at);
    jdbc.update("UPDATE pay_accounts SET balance = balance + ? WHERE id = ?", amount, account);
  }

  /** One of the merchant's payments. */
  Optional<Payment> find(String merchant, String id) {
    return jdbc
        .query(
            "SELECT id, amount, currency, source, destination, status FROM pay_payments"
                + " WHERE id = ? AND merchant_id = ?",
            (rs, i) ->
                new Payment(
                    rs.getString("id"),
                    rs.getLong("amount"),
                    rs.getString("currency").trim(),
                    rs.getString("source"),
                    rs.getString("destination"),
                    rs.getString("status")),
            id,
            merchant)
        .stream()
        .findFirst();
  }
}
