package dev.once.messaging;

import dev.once.ExecutionPolicy;
import dev.once.Fingerprint;
import dev.once.OutcomeClassifier;
import dev.once.Scope;
import dev.once.fingerprint.Fingerprinter;
import dev.once.internal.Arguments;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The options both consumers share, each validated when set; {@code build()} checks combinations.
 *
 * @param <M> the broker's message type
 * @param <B> the concrete builder, so chained calls keep their type
 */
abstract class MessageOptions<M, B extends MessageOptions<M, B>> {

  static final Duration MAX_DELAY = Duration.ofHours(12);
  static final Duration DEFAULT_DELAY = Duration.ofSeconds(1);

  final MessageReader<M> reader;
  KeyExtractor<M> keys = KeyExtractor.defaults();
  boolean messageIdFallback = true;
  @Nullable Function<? super M, Scope> scopes;
  Function<? super M, Fingerprint> fingerprints;
  @Nullable ExecutionPolicy policy;
  OutcomeClassifier<Object> classifier = OutcomeClassifier.defaults();
  Duration inFlightRedeliveryDelay = DEFAULT_DELAY;
  Duration retryDelay = DEFAULT_DELAY;

  MessageOptions(MessageReader<M> reader) {
    this.reader = Objects.requireNonNull(reader, "reader");
    this.fingerprints = message -> Fingerprinter.defaults().raw(reader.payload(message), "message");
  }

  /**
   * Where the key comes from (default: the header {@value KeyExtractor#DEFAULT_HEADER}, see {@link
   * #messageIdFallback(boolean)}).
   */
  public B key(KeyExtractor<M> keys) {
    this.keys = Objects.requireNonNull(keys, "keys");
    return self();
  }

  /**
   * Whether a message without a key of its own is keyed by its {@linkplain MessageReader#messageId
   * id} (default {@code true}). A broker-assigned id (SQS) deduplicates redeliveries but not a
   * producer that sends the same thing twice; only a key the producer sets does both.
   */
  public B messageIdFallback(boolean messageIdFallback) {
    this.messageIdFallback = messageIdFallback;
    return self();
  }

  /**
   * Who owns the keys: name the consuming service and its subscription, such as {@code
   * Scope.of("billing", "orders")}, so that two services consuming one message each process it
   * once. Required.
   */
  public B scope(Scope scope) {
    Objects.requireNonNull(scope, "scope");
    this.scopes = message -> scope;
    return self();
  }

  /** The scope as a function of the message (a tenant header, say); it must not return null. */
  public B scope(Function<? super M, Scope> scopes) {
    this.scopes = Objects.requireNonNull(scopes, "scopes");
    return self();
  }

  /**
   * What makes two messages with one key the same (default: SHA-256 of the raw payload). A
   * redelivery has the same fingerprint; a different payload under a used key is rejected with
   * {@link Acknowledgement.RejectReason#KEY_REUSED}. Use {@link Fingerprinter#json} here to ignore
   * key order or volatile fields of JSON payloads.
   */
  public B fingerprint(Function<? super M, Fingerprint> fingerprints) {
    this.fingerprints = Objects.requireNonNull(fingerprints, "fingerprints");
    return self();
  }

  /** Lease, record lifetime, in-flight and store-failure behaviour (default: see each consumer). */
  public B policy(ExecutionPolicy policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
    return self();
  }

  /**
   * Which handler exceptions are final and which transient (default: {@link dev.once.FinalFailure}
   * is final, anything else transient). Only {@link OutcomeClassifier#classifyError} is consulted:
   * a handler returns nothing.
   */
  public B classifier(OutcomeClassifier<Object> classifier) {
    this.classifier = Objects.requireNonNull(classifier, "classifier");
    return self();
  }

  /**
   * How long a message whose key another consumer is processing waits before it comes back (default
   * 1 s, at most 12 h). It is asked again, then replayed once the first finishes, or run once the
   * first consumer's lease ends if that consumer died.
   */
  public B inFlightRedeliveryDelay(Duration delay) {
    this.inFlightRedeliveryDelay =
        Arguments.between("inFlightRedeliveryDelay", delay, Duration.ZERO, MAX_DELAY);
    return self();
  }

  /**
   * How long a message whose handler failed transiently waits before it comes back (default 1 s, at
   * most 12 h).
   */
  public B retryDelay(Duration delay) {
    this.retryDelay = Arguments.between("retryDelay", delay, Duration.ZERO, MAX_DELAY);
    return self();
  }

  /** The semantics these options describe, under {@code policy}. */
  MessageSemantics<M> semantics(ExecutionPolicy policy) {
    if (scopes == null) {
      throw new IllegalStateException(
          "scope is required: name the consumer, e.g. Scope.of(\"billing\", \"orders\"),"
              + " so that two services consuming one message each process it");
    }
    return new MessageSemantics<>(this, policy);
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }
}
