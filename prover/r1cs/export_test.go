package r1cs

// MulSmall exposes mulSmall to the external tests.
var MulSmall = mulSmall
