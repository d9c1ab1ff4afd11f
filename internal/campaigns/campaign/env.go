package campaign

// DefaultSenderGroup is the sender group's name unless the construct's
// SenderGroup prop names another.
const DefaultSenderGroup = "campaign-senders"
