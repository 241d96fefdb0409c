#pragma once

/// Forward declarations of troupe's collective types (collectives/).
namespace troupe {

enum class ReduceOp : unsigned char;
enum class CollectiveKind : unsigned char;
enum class CommunicationImplementation : unsigned char;
struct CollectiveKey;
struct CollectiveFingerprint;
struct CommunicationOptions;

} // namespace troupe
