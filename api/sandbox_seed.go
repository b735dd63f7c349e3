package api

// SandboxReset is the body of POST /sandbox/v1/reset: the credit the emptied account
// starts with (left out: its first top-up).
type SandboxReset struct {
	Credit *string `json:"credit,omitempty"`
}

// SandboxTicketReply is the body of POST /sandbox/v1/tickets/{id}/reply: a staff
// reply's text and the name it is signed with (left out: Support).
type SandboxTicketReply struct {
	Body       *string `json:"body,omitempty"`
	AuthorName *string `json:"author_name,omitempty"`
}

// SandboxSeed is the body of POST /sandbox/v1/seed: records to make at once, by
// kind, each as its create call takes it (servers: SandboxSeedServer; volumes:
// SandboxSeedVolume).
type SandboxSeed struct {
	SSHKeys  []SSHKeyCreate      `json:"ssh_keys,omitempty"`
	Projects []ProjectWrite      `json:"projects,omitempty"`
	Recipes  []RecipeWrite       `json:"recipes,omitempty"`
	Servers  []SandboxSeedServer `json:"servers,omitempty"`
	Volumes  []SandboxSeedVolume `json:"volumes,omitempty"`
	Domains  []DomainCreate      `json:"domains,omitempty"`
}

// SandboxSeedServer is a server to seed: in Status (running or stopped; left out:
// running) at once, in the project named Project, with the SSH keys named SSHKeys,
// holding the license products LicenseIDs (beside those its image requires).
type SandboxSeedServer struct {
	DisplayName *string  `json:"display_name,omitempty"`
	PlanID      *int64   `json:"plan_id,omitempty"`
	LocationID  *int64   `json:"location_id,omitempty"`
	ImageID     *int64   `json:"image_id,omitempty"`
	Status      *string  `json:"status,omitempty"`
	Project     *string  `json:"project,omitempty"`
	SSHKeys     []string `json:"ssh_keys,omitempty"`
	LicenseIDs  []int64  `json:"license_ids,omitempty"`
}

// SandboxSeedVolume is a volume to seed, available at once: as POST /volumes takes
// it, but in the project named Project, and attached to the server whose display
// name is Server (then in its location; automounted when Automount asks).
type SandboxSeedVolume struct {
	Name       *string `json:"name,omitempty"`
	SizeGB     *int64  `json:"size_gb,omitempty"`
	LocationID *int64  `json:"location_id,omitempty"`
	Format     *string `json:"format,omitempty"`
	Project    *string `json:"project,omitempty"`
	Server     *string `json:"server,omitempty"`
	Automount  *bool   `json:"automount,omitempty"`
}

// SandboxSeeded is what a seed made, by kind, in the order it was asked for.
type SandboxSeeded struct {
	SSHKeys  []SSHKey  `json:"ssh_keys"`
	Projects []Project `json:"projects"`
	Recipes  []Recipe  `json:"recipes"`
	Servers  []Server  `json:"servers"`
	Volumes  []Volume  `json:"volumes"`
	Domains  []Domain  `json:"domains"`
}
