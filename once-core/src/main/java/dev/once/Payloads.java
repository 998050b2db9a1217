package dev.once;

import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordState;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The framing of what the engine stores as a record's result: one tag byte, then the value. The tag
 * tells a replayed value from a replayed {@link FinalFailure} and from "done, result not stored",
 * so that stores only ever see opaque bytes.
 */
final class Payloads {

  private static final byte VALUE = 1;
  private static final byte FAILURE = 2;
  private static final byte NOT_STORED = 3;
  private static final byte[] NOT_STORED_PAYLOAD = {NOT_STORED};

  private Payloads() {}

  static byte[] value(byte[] value) {
    byte[] framed = new byte[value.length + 1];
    framed[0] = VALUE;
    System.arraycopy(value, 0, framed, 1, value.length);
    return framed;
  }

  static byte[] failure(FinalFailure failure) {
    byte[] code = failure.code().getBytes(StandardCharsets.UTF_8);
    String message = failure.getMessage();
    byte[] text = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + 4 + code.length + text.length)
        .put(FAILURE)
        .putInt(code.length)
        .put(code)
        .put(text)
        .array();
  }

  static byte[] notStored() {
    return NOT_STORED_PAYLOAD;
  }

  /** What a terminal record replays as. */
  static Admission replay(IdempotencyRecord record) {
    byte[] payload = Objects.requireNonNull(record.result(), "a terminal record carries a result");
    Outcome outcome =
        record.state() == RecordState.COMPLETED ? Outcome.COMPLETED : Outcome.FAILED_FINAL;
    if (payload.length == 0) {
      return new Admission.ResponseUnavailable();
    }
    switch (payload[0]) {
      case VALUE:
        byte[] value = new byte[payload.length - 1];
        System.arraycopy(payload, 1, value, 0, value.length);
        return new Admission.Replay(outcome, value);
      case FAILURE:
        try {
          return new Admission.ReplayFailure(decodeFailure(payload));
        } catch (RuntimeException corrupt) {
          return new Admission.ResponseUnavailable();
        }
      default:
        return new Admission.ResponseUnavailable();
    }
  }

  private static FinalFailure decodeFailure(byte[] payload) {
    ByteBuffer buf = ByteBuffer.wrap(payload, 1, payload.length - 1);
    int codeLength = buf.getInt();
    if (codeLength <= 0 || codeLength > payload.length - 5) {
      throw new IllegalArgumentException("corrupt failure payload");
    }
    String code = new String(payload, 5, codeLength, StandardCharsets.UTF_8);
    int textStart = 5 + codeLength;
    String message =
        new String(payload, textStart, payload.length - textStart, StandardCharsets.UTF_8);
    return new FinalFailure(code, message.isEmpty() ? null : message, true);
  }
}
